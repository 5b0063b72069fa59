//! The generated schema: table templates that together exercise every
//! catalogue feature, plus seed-derived random tables.

use ndarc_format::catalogue::rowid_alias;
use ndarc_format::Affinity;
use ndarc_json::{cmp_utf16, Object, Value};

use crate::rng::{derive, derive_all, Rng};

/// A kind of generated table.
///
/// The ten templates are fixed designs, each showing some features; a
/// default run has all ten, so every feature of the format appears.
/// [`TableKind::Random`] tables have a schema drawn from the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableKind {
    /// `users`: single-column `INTEGER PRIMARY KEY`; every affinity (TEXT,
    /// VARCHAR, DATETIME, NUMERIC, REAL, BOOLEAN, BLOB, empty type); excluded
    /// columns; a stored and a virtual generated column; unicode names;
    /// long text (several KB) in some rows; nulls.
    Users,
    /// `orders`: composite primary key whose `pk` order differs from column
    /// order; a virtual generated column; a foreign key to `users`.
    Orders,
    /// `events`: a rowid table (`rowidAlias` `rowid`) with negative, sparse
    /// rowids; JSON text; blobs; foreign keys to `Audit` and `users`.
    Events,
    /// `legacy_rows`: a column named `rowid` shadows the alias, so
    /// `rowidAlias` is `_rowid_`; lower-case `create  table` SQL; a column of
    /// empty declared type.
    LegacyRows,
    /// `shadowed_rowid`: `ROWID` and `_RowId_` both shadowed, `rowidAlias` is
    /// `oid`; rowids above 10^12.
    ShadowedRowid,
    /// `tags`: a single `TEXT PRIMARY KEY` with unicode key suffixes.
    Tags,
    /// `kv_store`: `WITHOUT ROWID`, composite text primary key, a BLOB value
    /// column holding strings, numbers and blobs.
    KvStore,
    /// `empty_things`: always empty (`count` 0).
    EmptyThings,
    /// `名前_😀`: a unicode (astral) table name and column names; rowids near
    /// 2^52; a foreign key to `tags`.
    Unicode,
    /// `Audit`: an upper-case name (sorts before the lower-case names in
    /// UTF-16 order); a text primary key; escapes in text.
    Audit,
    /// A table whose columns, primary key, generated and excluded columns are
    /// drawn from the seed; the number tells random tables apart.
    Random(u32),
    /// One of the eight [`NARROW`] tables (0–7): the shape of a typical
    /// application export rather than a feature tour — 4 to 7 columns,
    /// short text (5–40 bytes, much of it non-ASCII), small and negative
    /// integers, reals and NULLs; rowid tables, single and composite keys,
    /// one `WITHOUT ROWID`.
    Narrow(u8),
}

/// The narrow shape (`gen --shape narrow`): eight narrow tables, as an
/// independent application export has them, for benchmarks on data that
/// is not the feature tour's.
pub const NARROW: [TableKind; 8] = [
    TableKind::Narrow(0),
    TableKind::Narrow(1),
    TableKind::Narrow(2),
    TableKind::Narrow(3),
    TableKind::Narrow(4),
    TableKind::Narrow(5),
    TableKind::Narrow(6),
    TableKind::Narrow(7),
];

/// The ten fixed templates, in no particular order.
pub const TEMPLATES: [TableKind; 10] = [
    TableKind::Users,
    TableKind::Orders,
    TableKind::Events,
    TableKind::LegacyRows,
    TableKind::ShadowedRowid,
    TableKind::Tags,
    TableKind::KvStore,
    TableKind::EmptyThings,
    TableKind::Unicode,
    TableKind::Audit,
];

impl TableKind {
    fn salt(self) -> u64 {
        match self {
            TableKind::Users => 1,
            TableKind::Orders => 2,
            TableKind::Events => 3,
            TableKind::LegacyRows => 4,
            TableKind::ShadowedRowid => 5,
            TableKind::Tags => 6,
            TableKind::KvStore => 7,
            TableKind::EmptyThings => 8,
            TableKind::Unicode => 9,
            TableKind::Audit => 10,
            TableKind::Random(i) => 1000 + u64::from(i),
            TableKind::Narrow(i) => 2000 + u64::from(i),
        }
    }
}

/// How a primary-key (or rowid) value is derived from a row's key number.
///
/// Key numbers increase with the row's position, so keys built from them by
/// these monotone maps are in SQLite BINARY order by construction: integers
/// compare numerically, and text keys are a fixed prefix, a zero-padded
/// fixed-width number and then a suffix that depends only on that number.
#[derive(Debug, Clone)]
pub(crate) enum KeyPart {
    /// `offset + ((K >> shift) & mask)`.
    Int { shift: u32, mask: u64, offset: i64 },
    /// `prefix + zero-padded((K >> shift) & mask, width) + suffix?`.
    Text {
        prefix: &'static str,
        shift: u32,
        mask: u64,
        width: usize,
        suffix: bool,
    },
}

/// How the cells of a column are drawn.
#[derive(Debug, Clone)]
pub(crate) enum CellKind {
    Key(KeyPart),
    Int,
    SmallInt,
    Bool,
    Real,
    Numeric,
    Money,
    EpochMs,
    Name,
    Email,
    ShortText,
    Escapes,
    LongText,
    JsonText,
    Color,
    Enum(&'static [&'static str]),
    Blob,
    Any,
    /// Short text, 5 to 40 bytes, about half of it non-ASCII.
    Word,
    /// Small integers, often negative (−1,000 to 1,000).
    Signed,
}

#[derive(Debug, Clone)]
pub(crate) struct ColDef {
    pub name: String,
    pub decl: String,
    pub notnull: bool,
    pub pk: u32,
    pub generated: Option<(&'static str, String)>,
    pub excluded: bool,
    pub kind: CellKind,
    /// Probability of null, per mille, where the column is nullable.
    pub nulls: u64,
    pub references: Option<(String, String)>,
    /// Affinity of `decl`, set by `finish`.
    pub affinity: Affinity,
}

fn col(name: &str, decl: &str, kind: CellKind) -> ColDef {
    ColDef {
        name: name.to_string(),
        decl: decl.to_string(),
        notnull: false,
        pk: 0,
        generated: None,
        excluded: false,
        kind,
        nulls: 0,
        references: None,
        affinity: Affinity::of(decl),
    }
}

impl ColDef {
    fn nn(mut self) -> Self {
        self.notnull = true;
        self
    }
    fn pk(mut self, n: u32) -> Self {
        self.pk = n;
        self
    }
    fn nulls(mut self, permille: u64) -> Self {
        self.nulls = permille;
        self
    }
    fn generated(mut self, how: &'static str, expr: &str) -> Self {
        self.generated = Some((how, expr.to_string()));
        self
    }
    fn excluded(mut self) -> Self {
        self.excluded = true;
        self.nulls = self.nulls.max(100);
        self
    }
    fn refs(mut self, table: &str, column: &str) -> Self {
        self.references = Some((table.to_string(), column.to_string()));
        self
    }
}

/// One generated table with everything the writer needs precomputed.
#[derive(Debug, Clone)]
pub(crate) struct TableDef {
    pub salt: u64,
    pub name: String,
    pub columns: Vec<ColDef>,
    pub without_rowid: bool,
    pub lower_sql: bool,
    pub rowid_offset: i64,
    pub always_empty: bool,
    // Derived by `finish`.
    pub sql: String,
    pub rowid_alias: Option<&'static str>,
    /// Indexes into `columns` of the row's members, in name order.
    pub row_cols: Vec<usize>,
    /// For each of `row_cols`: `"name":`, with a leading comma after the
    /// first.
    pub prefixes: Vec<Vec<u8>>,
    /// Positions in `row_cols` of columns a later export may change.
    pub mutable: Vec<usize>,
    /// The canonical JSON string of the name, quotes included.
    pub name_json: Vec<u8>,
    pub dependencies: Vec<String>,
    pub excluded_names: Vec<String>,
}

fn table(kind: TableKind, name: &str, columns: Vec<ColDef>) -> TableDef {
    TableDef {
        salt: kind.salt(),
        name: name.to_string(),
        columns,
        without_rowid: false,
        lower_sql: false,
        rowid_offset: 1,
        always_empty: false,
        sql: String::new(),
        rowid_alias: None,
        row_cols: Vec::new(),
        prefixes: Vec::new(),
        mutable: Vec::new(),
        name_json: Vec::new(),
        dependencies: Vec::new(),
        excluded_names: Vec::new(),
    }
}

const STATUSES: &[&str] = &["pending", "paid", "shipped", "cancelled", "refunded"];
const EVENT_KINDS: &[&str] = &["login", "logout", "purchase", "error", "héartbeat"];

/// The table of template `kind` (`seed` draws a random table's schema).
fn template(kind: TableKind, seed: u64) -> TableDef {
    match kind {
        TableKind::Users => users(kind),
        TableKind::Orders => orders(kind),
        TableKind::Events => events(kind),
        TableKind::LegacyRows => legacy_rows(kind),
        TableKind::ShadowedRowid => shadowed_rowid(kind),
        TableKind::Tags => tags(kind),
        TableKind::KvStore => kv_store(kind),
        TableKind::EmptyThings => empty_things(kind),
        TableKind::Unicode => unicode(kind),
        TableKind::Audit => audit(kind),
        TableKind::Random(i) => random_table(i, seed),
        TableKind::Narrow(i) => narrow_table(kind, i),
    }
}

/// An integer key part: `offset + ((K >> shift) & mask)`.
fn int_key(shift: u32, mask: u64, offset: i64) -> CellKind {
    CellKind::Key(KeyPart::Int {
        shift,
        mask,
        offset,
    })
}

/// `users`: every affinity, generated and excluded columns, an integer
/// key (a rowid alias).
fn users(kind: TableKind) -> TableDef {
    use CellKind as K;
    table(
        kind,
        "users",
        vec![
            col("id", "INTEGER", int_key(0, u64::MAX, 1)).pk(1),
            col("name", "TEXT", K::Name).nn(),
            col("email", "VARCHAR(255)", K::Email).nulls(100),
            col("password_hash", "TEXT", K::ShortText).excluded(),
            col("api_token", "CHAR(64)", K::ShortText).excluded(),
            col("created_at", "DATETIME", K::EpochMs).nn(),
            col("balance", "NUMERIC", K::Numeric).nulls(150),
            col("score", "REAL", K::Real).nulls(100),
            col("is_admin", "BOOLEAN", K::Bool).nn(),
            col("bio", "TEXT", K::LongText).nulls(200),
            col("avatar", "BLOB", K::Blob).nulls(300),
            col("settings", "", K::Any).nulls(100),
            col("slug", "TEXT", K::ShortText).generated("stored", "lower(name)"),
            col("name_length", "INTEGER", K::Int).generated("virtual", "length(name)"),
        ],
    )
}

/// `orders`: a composite primary key referring to `users`.
fn orders(kind: TableKind) -> TableDef {
    use CellKind as K;
    table(
        kind,
        "orders",
        vec![
            col("seq", "INTEGER", int_key(0, 63, 0)).nn().pk(2),
            col("user_id", "INTEGER", int_key(6, u64::MAX, 1))
                .nn()
                .pk(1)
                .refs("users", "id"),
            col("amount", "DECIMAL(10,2)", K::Money).nn(),
            col("qty", "INT", K::SmallInt).nn(),
            col("total", "REAL", K::Real).generated("virtual", "amount * qty"),
            col("status", "VARCHAR(16)", K::Enum(STATUSES)).nn(),
            col("placed_at", "DATETIME", K::EpochMs).nulls(100),
            col("note", "CLOB", K::Escapes).nulls(400),
        ],
    )
}

/// `events`: a rowid table without a key, rowids from a negative offset.
fn events(kind: TableKind) -> TableDef {
    use CellKind as K;
    let mut t = table(
        kind,
        "events",
        vec![
            col("kind", "TEXT", K::Enum(EVENT_KINDS)).nn(),
            col("user_id", "INTEGER", K::Int)
                .nulls(200)
                .refs("users", "id"),
            col("audit_id", "TEXT", K::ShortText)
                .nulls(500)
                .refs("Audit", "EventID"),
            col("payload", "TEXT", K::JsonText).nulls(100),
            col("at", "INTEGER", K::EpochMs).nn(),
            col("data", "BLOB", K::Blob).nulls(500),
            col("weight", "FLOAT", K::Real).nulls(300),
        ],
    );
    t.rowid_offset = -500_000;
    t
}

/// `legacy_rows`: a column named `rowid`, SQL in lower case.
fn legacy_rows(kind: TableKind) -> TableDef {
    use CellKind as K;
    let mut t = table(
        kind,
        "legacy_rows",
        vec![
            col("rowid", "TEXT", K::ShortText).nulls(100),
            col("value", "NUMERIC", K::Numeric).nulls(100),
            col("extra", "", K::Any).nulls(200),
            col("flag", "BOOL", K::Bool).nulls(300),
        ],
    );
    t.lower_sql = true;
    t
}

/// `shadowed_rowid`: columns that shadow `ROWID` and `_RowId_`, large
/// rowids.
fn shadowed_rowid(kind: TableKind) -> TableDef {
    use CellKind as K;
    let mut t = table(
        kind,
        "shadowed_rowid",
        vec![
            col("ROWID", "INTEGER", K::Int).nulls(100),
            col("_RowId_", "TEXT", K::Name).nulls(100),
            col("note", "TEXT", K::Escapes).nulls(300),
        ],
    );
    t.rowid_offset = 1_000_000_000_000;
    t
}

/// `tags`: a text primary key.
fn tags(kind: TableKind) -> TableDef {
    use CellKind as K;
    table(
        kind,
        "tags",
        vec![
            col(
                "name",
                "TEXT",
                K::Key(KeyPart::Text {
                    prefix: "tag-",
                    shift: 0,
                    mask: u64::MAX,
                    width: 10,
                    suffix: true,
                }),
            )
            .pk(1),
            col("color", "CHAR(7)", K::Color).nn(),
            col("weight", "REAL", K::Real).nulls(200),
            col("description", "NVARCHAR(200)", K::Name).nulls(300),
        ],
    )
}

/// `kv_store`: a `WITHOUT ROWID` table with a composite text key.
fn kv_store(kind: TableKind) -> TableDef {
    use CellKind as K;
    let mut t = table(
        kind,
        "kv_store",
        vec![
            col(
                "ns",
                "TEXT",
                K::Key(KeyPart::Text {
                    prefix: "ns-",
                    shift: 8,
                    mask: u64::MAX,
                    width: 8,
                    suffix: false,
                }),
            )
            .nn()
            .pk(1),
            col(
                "key",
                "TEXT",
                K::Key(KeyPart::Text {
                    prefix: "k/",
                    shift: 0,
                    mask: 255,
                    width: 3,
                    suffix: true,
                }),
            )
            .nn()
            .pk(2),
            col("value", "BLOB", K::Any).nn(),
            col("expires_at", "INTEGER", K::EpochMs).nulls(500),
            col("version", "NUMERIC", K::SmallInt).nn(),
        ],
    );
    t.without_rowid = true;
    t
}

/// `empty_things`: a table that has no rows.
fn empty_things(kind: TableKind) -> TableDef {
    use CellKind as K;
    let mut t = table(
        kind,
        "empty_things",
        vec![
            col("id", "INTEGER", int_key(0, u64::MAX, 1)).pk(1),
            col("label", "TEXT", K::Name).nn(),
        ],
    );
    t.always_empty = true;
    t
}

/// `名前_😀`: non-ASCII names, rowids from 2^52.
fn unicode(kind: TableKind) -> TableDef {
    use CellKind as K;
    let mut t = table(
        kind,
        "名前_😀",
        vec![
            col("ключ", "TEXT", K::Name).nn(),
            col("値", "REAL", K::Real).nulls(100),
            col("emoji 😀", "TEXT", K::Escapes).nulls(100),
            col("Ünïcödé", "BLOB", K::Blob).nulls(300),
            col("タグ", "TEXT", K::ShortText)
                .nulls(300)
                .refs("tags", "name"),
        ],
    );
    t.rowid_offset = 4_503_599_627_370_496; // 2^52
    t
}

/// `Audit`: mixed-case names, a text key that `events` refers to.
fn audit(kind: TableKind) -> TableDef {
    use CellKind as K;
    table(
        kind,
        "Audit",
        vec![
            col(
                "EventID",
                "TEXT",
                K::Key(KeyPart::Text {
                    prefix: "evt-",
                    shift: 0,
                    mask: u64::MAX,
                    width: 12,
                    suffix: true,
                }),
            )
            .nn()
            .pk(1),
            col("Actor", "INTEGER", K::Int)
                .nulls(200)
                .refs("users", "id"),
            col("At", "DATETIME", K::EpochMs).nn(),
            col("Message", "TEXT", K::Escapes).nn(),
            col("Detail", "TEXT", K::JsonText).nulls(300),
        ],
    )
}

const LANGS: &[&str] = &["en", "de", "fr", "ja", "pt-BR", "zh-Hans", "ar"];
const UNITS: &[&str] = &["ms", "s", "B", "KiB", "req/s", "%", "°C"];

fn narrow_table(kind: TableKind, i: u8) -> TableDef {
    use CellKind as K;
    let int_key = |shift, mask, offset| {
        K::Key(KeyPart::Int {
            shift,
            mask,
            offset,
        })
    };
    match i {
        0 => table(
            kind,
            "accounts",
            vec![
                col("id", "INTEGER", int_key(0, u64::MAX, 1)).pk(1),
                col("handle", "TEXT", K::Word).nn(),
                col("balance", "REAL", K::Real).nulls(150),
                col("created", "INTEGER", K::EpochMs).nn(),
                col("active", "BOOLEAN", K::Bool).nn(),
            ],
        ),
        1 => table(
            kind,
            "posts",
            vec![
                col("author_id", "INTEGER", K::Signed).nn(),
                col("title", "TEXT", K::Word).nn(),
                col("score", "INTEGER", K::Signed).nulls(100),
                col("lang", "TEXT", K::Enum(LANGS)).nulls(200),
            ],
        ),
        2 => table(
            kind,
            "comments",
            vec![
                col("post_id", "INTEGER", int_key(4, u64::MAX, -5000))
                    .nn()
                    .pk(1),
                col("seq", "INTEGER", int_key(0, 15, 0)).nn().pk(2),
                col("body", "TEXT", K::Word).nn(),
                col("votes", "INTEGER", K::Signed).nn(),
                col("edited", "REAL", K::Real).nulls(700),
            ],
        ),
        3 => {
            let mut t = table(
                kind,
                "likes",
                vec![
                    col("user_id", "INTEGER", int_key(3, u64::MAX, 1))
                        .nn()
                        .pk(1),
                    col("post_id", "INTEGER", int_key(0, 7, -3)).nn().pk(2),
                    col("at", "INTEGER", K::EpochMs).nn(),
                    col("weight", "REAL", K::Real).nulls(300),
                ],
            );
            t.without_rowid = true;
            t
        }
        4 => table(
            kind,
            "cities",
            vec![
                col(
                    "code",
                    "TEXT",
                    K::Key(KeyPart::Text {
                        prefix: "c",
                        shift: 0,
                        mask: u64::MAX,
                        width: 8,
                        suffix: false,
                    }),
                )
                .pk(1),
                col("name", "TEXT", K::Word).nn(),
                col("lat", "REAL", K::Real).nn(),
                col("lon", "REAL", K::Real).nn(),
                col("population", "INTEGER", K::Signed).nulls(100),
                col(
                    "country",
                    "CHAR(2)",
                    K::Enum(&["DE", "FR", "JP", "BR", "CN", "EG"]),
                )
                .nn(),
            ],
        ),
        5 => {
            let mut t = table(
                kind,
                "metrics",
                vec![
                    col("name", "TEXT", K::Word).nn(),
                    col("value", "REAL", K::Real).nulls(50),
                    col("delta", "INTEGER", K::Signed).nulls(100),
                    col("unit", "TEXT", K::Enum(UNITS)).nn(),
                    col("at", "INTEGER", K::EpochMs).nn(),
                    col("note", "TEXT", K::Word).nulls(600),
                    col("ok", "BOOLEAN", K::Bool).nn(),
                ],
            );
            t.rowid_offset = -100_000;
            t
        }
        6 => table(
            kind,
            "visits",
            vec![
                col("path", "TEXT", K::Word).nn(),
                col("ms", "INTEGER", K::Signed).nn(),
                col("status", "INTEGER", K::SmallInt).nn(),
                col("referrer", "TEXT", K::Word).nulls(500),
            ],
        ),
        _ => table(
            kind,
            "labels",
            vec![
                col("id", "INTEGER", int_key(0, u64::MAX, -1000)).pk(1),
                col("name", "TEXT", K::Word).nn(),
                col("color", "CHAR(7)", K::Color).nn(),
                col("uses", "INTEGER", K::Signed).nn(),
                col("ratio", "REAL", K::Real).nulls(250),
                col("hidden", "BOOLEAN", K::Bool).nulls(100),
            ],
        ),
    }
}

const WORDS: &[&str] = &[
    "alpha", "bravo", "delta", "kilo", "lima", "nova", "orbit", "pixel", "quartz", "river",
    "sigma", "tango", "umbra", "vector", "willow", "zephyr",
];

fn random_table(i: u32, seed: u64) -> TableDef {
    use CellKind as K;
    let mut rng = Rng::new(derive_all(seed, &[0x7AB1E, u64::from(i)]));
    let name = format!("t{i:03}_{}", rng.pick(WORDS));
    let pool: [(&str, CellKind); 12] = [
        ("INTEGER", K::Int),
        ("TEXT", K::Name),
        ("REAL", K::Real),
        ("BLOB", K::Blob),
        ("", K::Any),
        ("NUMERIC", K::Numeric),
        ("DATETIME", K::EpochMs),
        ("VARCHAR(40)", K::Escapes),
        ("BIGINT", K::Int),
        ("DOUBLE PRECISION", K::Real),
        ("TEXT", K::ShortText),
        ("TINYINT", K::Bool),
    ];
    let mut columns = Vec::new();
    let pk_style = rng.below(3);
    match pk_style {
        1 => columns.push(
            col(
                "id",
                "INTEGER",
                K::Key(KeyPart::Int {
                    shift: 0,
                    mask: u64::MAX,
                    offset: rng.range_i64(-1000, 1000),
                }),
            )
            .pk(1),
        ),
        2 => {
            columns.push(
                col(
                    "part",
                    "TEXT",
                    K::Key(KeyPart::Text {
                        prefix: "p",
                        shift: 4,
                        mask: u64::MAX,
                        width: 9,
                        suffix: true,
                    }),
                )
                .nn()
                .pk(1),
            );
            columns.push(
                col(
                    "n",
                    "INTEGER",
                    K::Key(KeyPart::Int {
                        shift: 0,
                        mask: 15,
                        offset: 0,
                    }),
                )
                .nn()
                .pk(2),
            );
        }
        _ => {}
    }
    let extra = rng.range(1, 6);
    for j in 0..extra {
        let (decl, kind) = rng.pick_ref(&pool).clone();
        let mut c = col(&format!("c{j}_{}", rng.pick(WORDS)), decl, kind);
        if rng.one_in(3) {
            c = c.nn();
        } else {
            c = c.nulls(rng.range(0, 500));
        }
        columns.push(c);
    }
    // A nullable, non-key column may be excluded; one column may be
    // generated (never the only written one).
    if rng.one_in(3) {
        if let Some(c) = columns.iter_mut().rev().find(|c| c.pk == 0 && !c.notnull) {
            *c = c.clone().excluded();
        }
    }
    if rng.one_in(3) {
        let how = if rng.one_in(2) { "virtual" } else { "stored" };
        let expr = format!("length({})", ident(&columns[0].name));
        columns.push(col("g_len", "INTEGER", K::Int).generated(how, &expr));
    }
    let mut t = table(TableKind::Random(i), &name, columns);
    t.rowid_offset = rng.range_i64(-10_000, 10_000);
    t.without_rowid = pk_style == 2 && rng.one_in(2);
    t.lower_sql = rng.one_in(4);
    t
}

/// Chooses the tables of an archive: `kinds` when given, otherwise `count`
/// tables — the templates first, in a seed-chosen order, then random ones.
pub(crate) fn choose(seed: u64, count: usize, kinds: Option<&[TableKind]>) -> Vec<TableKind> {
    if let Some(kinds) = kinds {
        let mut out: Vec<TableKind> = Vec::new();
        for k in kinds {
            if !out.contains(k) {
                out.push(*k);
            }
        }
        return out;
    }
    let mut order = TEMPLATES.to_vec();
    // Fisher–Yates with the deterministic generator.
    let mut rng = Rng::new(derive(seed, 0x5E1EC7));
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut out: Vec<TableKind> = order.into_iter().take(count).collect();
    for i in 0..count.saturating_sub(TEMPLATES.len()) {
        out.push(TableKind::Random(i as u32));
    }
    out
}

/// Builds the table definitions, resolves foreign keys against the tables
/// present, sorts by name and precomputes everything the writer needs.
pub(crate) fn build(seed: u64, kinds: &[TableKind]) -> Vec<TableDef> {
    let mut tables: Vec<TableDef> = kinds.iter().map(|k| template(*k, seed)).collect();
    let names: Vec<String> = tables.iter().map(|t| t.name.clone()).collect();
    for t in &mut tables {
        for c in &mut t.columns {
            if let Some((parent, _)) = &c.references {
                if !names.contains(parent) {
                    c.references = None;
                }
            }
        }
        finish(t);
    }
    tables.sort_by(|a, b| cmp_utf16(&a.name, &b.name));
    tables
}

fn ident(name: &str) -> String {
    ndarc_sql::quote_ident_if_needed(name)
}

fn finish(t: &mut TableDef) {
    if t.lower_sql {
        // PRAGMA table_info reports the type as the SQL text declares it.
        for c in &mut t.columns {
            c.decl = c.decl.to_ascii_lowercase();
        }
    }
    for c in &mut t.columns {
        c.affinity = Affinity::of(&c.decl);
    }
    let any_pk = t.columns.iter().any(|c| c.pk > 0);
    t.rowid_alias = rowid_alias(t.columns.iter().map(|c| c.name.as_str()), any_pk)
        .ok()
        .flatten();
    let mut row_cols: Vec<usize> = (0..t.columns.len())
        .filter(|&i| t.columns[i].generated.is_none() && !t.columns[i].excluded)
        .collect();
    row_cols.sort_by(|&a, &b| cmp_utf16(&t.columns[a].name, &t.columns[b].name));
    t.prefixes = row_cols
        .iter()
        .enumerate()
        .map(|(n, &i)| {
            let mut p = Vec::new();
            if n > 0 {
                p.push(b',');
            }
            ndarc_json::write_string(&t.columns[i].name, &mut p);
            p.push(b':');
            p
        })
        .collect();
    t.mutable = row_cols
        .iter()
        .enumerate()
        .filter(|(_, &i)| t.columns[i].pk == 0)
        .map(|(n, _)| n)
        .collect();
    t.row_cols = row_cols;
    t.name_json.clear();
    ndarc_json::write_string(&t.name, &mut t.name_json);
    let mut deps: Vec<String> = t
        .columns
        .iter()
        .filter_map(|c| c.references.as_ref().map(|r| r.0.clone()))
        .collect();
    deps.sort_by(|a, b| cmp_utf16(a, b));
    deps.dedup();
    t.dependencies = deps;
    t.excluded_names = t
        .columns
        .iter()
        .filter(|c| c.excluded)
        .map(|c| c.name.clone())
        .collect();
    t.sql = sql(t);
}

fn sql(t: &TableDef) -> String {
    let pks: Vec<&ColDef> = {
        let mut v: Vec<&ColDef> = t.columns.iter().filter(|c| c.pk > 0).collect();
        v.sort_by_key(|c| c.pk);
        v
    };
    let mut lines = Vec::new();
    for c in &t.columns {
        let mut s = ident(&c.name);
        if !c.decl.is_empty() {
            s.push(' ');
            s.push_str(&c.decl);
        }
        if c.notnull {
            s.push_str(" NOT NULL");
        }
        if pks.len() == 1 && c.pk == 1 {
            s.push_str(" PRIMARY KEY");
        }
        if let Some((how, expr)) = &c.generated {
            s.push_str(&format!(
                " GENERATED ALWAYS AS ({expr}) {}",
                how.to_ascii_uppercase()
            ));
        }
        if let Some((table, column)) = &c.references {
            s.push_str(&format!(" REFERENCES {}({})", ident(table), ident(column)));
        }
        lines.push(s);
    }
    if pks.len() > 1 {
        let names: Vec<String> = pks.iter().map(|c| ident(&c.name)).collect();
        lines.push(format!("PRIMARY KEY ({})", names.join(", ")));
    }
    let tail = if t.without_rowid {
        " WITHOUT ROWID"
    } else {
        ""
    };
    if t.lower_sql {
        // Lower-case SQL is used only for tables whose names are lower-case
        // ASCII, so only keywords change.
        let body: Vec<String> = lines.iter().map(|l| l.to_ascii_lowercase()).collect();
        format!(
            "create  table {}({}){}",
            ident(&t.name),
            body.join(", "),
            tail.to_ascii_lowercase()
        )
    } else {
        format!(
            "CREATE TABLE {} (\n  {}\n){}",
            ident(&t.name),
            lines.join(",\n  "),
            tail
        )
    }
}

/// The manifest's table entry (without `count`, added by the caller).
pub(crate) fn table_value(t: &TableDef, count: u64) -> Value<'static> {
    let mut o = Object::new();
    o.insert("name", Value::from(t.name.clone()));
    o.insert("sql", Value::from(t.sql.clone()));
    let columns = t
        .columns
        .iter()
        .map(|c| {
            let mut co = Object::new();
            co.insert("name", Value::from(c.name.clone()));
            co.insert("type", Value::from(c.decl.clone()));
            co.insert("notnull", Value::from(i64::from(c.notnull)));
            co.insert("pk", Value::from(i64::from(c.pk)));
            if let Some((how, _)) = &c.generated {
                co.insert("generated", Value::from(*how));
            }
            Value::Object(co)
        })
        .collect();
    o.insert("columns", Value::Array(columns));
    o.insert(
        "dependencies",
        Value::Array(
            t.dependencies
                .iter()
                .map(|d| Value::from(d.clone()))
                .collect(),
        ),
    );
    o.insert("rowidAlias", t.rowid_alias.map_or(Value::Null, Value::from));
    o.insert("count", Value::from(count as i64));
    Value::Object(o)
}
