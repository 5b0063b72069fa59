//! SQL text of the portability archive, judged by SQLite itself, and SQL
//! quoting.
//!
//! An archive's table carries its `CREATE TABLE` statement (`sql`), which
//! an import runs and a SQL patch repeats. The format allows exactly the
//! statement `sqlite_schema` holds for the table (SPEC.md §4.3): one plain
//! `CREATE TABLE` of that table, with those columns, whose expressions call
//! only SQLite's built-in scalar functions. [`TableSqlJudge`] decides that
//! with SQLite's own parser: it prepares the text in an empty in-memory
//! database under an authorizer that sees every action and function the
//! statement compiles, creates the table, reads its columns back, and
//! undoes it. Nothing of the text is run but the `CREATE TABLE` itself (in
//! memory, and only once SQLite has prepared it as exactly that).
//!
//! [`quote_ident`] and [`quote_literal`] are the one place where names and
//! text become SQL.
//!
//! ```
//! use ndarc_format::manifest::{Column, Table};
//! let judge = ndarc_sql::TableSqlJudge::new().unwrap();
//! let column = |name: &str, ty: &str, pk| Column {
//!     name: name.into(),
//!     decl_type: ty.into(),
//!     notnull: false,
//!     pk,
//!     generated: None,
//! };
//! let mut t = Table {
//!     name: "t".into(),
//!     sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)".into(),
//!     columns: vec![column("id", "INTEGER", 1), column("body", "TEXT", 0)],
//!     dependencies: vec![],
//!     rowid_alias: None,
//!     count: 0,
//! };
//! assert!(judge.judge(&t).is_ok());
//! t.sql.push_str("; ATTACH '/other.db' AS o");
//! let refusal = judge.judge(&t).unwrap_err();
//! assert!(refusal.to_string().contains("second statement"), "{refusal}");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ndarc_format::manifest::{Generated, Table};
use rusqlite::config::DbConfig;
use rusqlite::fallible_iterator::FallibleIterator as _;
use rusqlite::functions::FunctionFlags;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::{Batch, Connection};

mod functions;
pub mod integrity;
mod quote;

pub use functions::{is_builtin_scalar, BUILTIN_SCALAR_FUNCTIONS};
pub use quote::{quote_ident, quote_ident_if_needed, quote_literal};

/// Why a table's `sql` is not the plain `CREATE TABLE` of that table. Its
/// [`Display`](fmt::Display) says what SQLite found, as the end of a
/// sentence that starts "the sql of table "t" ": e.g. "holds a second
/// statement after the CREATE TABLE (at character 23)".
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The text holds a NUL character (SQLite's text ends there).
    Nul {
        /// Character position (0-based) of the NUL.
        at: usize,
    },
    /// SQLite cannot prepare the text (a syntax error, an unknown
    /// function, a duplicate column …).
    Sqlite {
        /// SQLite's message.
        message: String,
        /// Character position SQLite points at, when it gives one.
        at: Option<usize>,
    },
    /// After the one statement comes more than whitespace.
    Trailing {
        /// What it is.
        what: Trail,
        /// Character position (0-based) where it starts.
        at: usize,
    },
    /// The statement is not a `CREATE TABLE` (SQLite compiled something
    /// else first).
    NotCreateTable,
    /// `CREATE TABLE … AS SELECT`: the table's rows and columns come from
    /// a query, run when the statement is.
    AsSelect,
    /// The statement creates a temporary table (`CREATE TABLE temp.t`).
    Temp,
    /// The table name is qualified by a schema (`main.t`).
    SchemaName {
        /// The text written before the table name, after `CREATE TABLE`.
        written: String,
    },
    /// The statement is not the text SQLite stores for the table: something
    /// other than `CREATE TABLE [IF NOT EXISTS]` before the name, or more
    /// than a `;` after the table's definition.
    NotAsStored {
        /// What `sqlite_schema` holds for the table it creates.
        stored: String,
    },
    /// The statement creates a table of another name.
    OtherName {
        /// The name it creates.
        created: String,
    },
    /// An expression of the table calls a function that is not one of
    /// SQLite's built-in scalar functions ([`BUILTIN_SCALAR_FUNCTIONS`]).
    Function {
        /// The function's name.
        name: String,
        /// Where: `"a DEFAULT"`, or any expression of the table when SQLite
        /// met it while creating the table.
        place: &'static str,
        /// SQLite does not know the function at all.
        unknown: bool,
    },
    /// The statement asks for an action other than creating its table
    /// (an authorizer action code and its arguments).
    Action {
        /// The action, as the authorizer saw it.
        action: String,
    },
    /// The table SQLite creates has other columns than the manifest lists.
    Columns {
        /// What differs.
        detail: String,
    },
}

/// What follows the statement in a [`Refusal::Trailing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trail {
    /// A comment (`--` or `/*`).
    Comment,
    /// A line starting with `.`: a command of the sqlite3 shell, which
    /// runs it when a SQL script holding it is piped in.
    DotCommand,
    /// Anything else: a second statement.
    Statement,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Nul { at } => write!(f, "holds a NUL character (at character {at})"),
            Refusal::Sqlite {
                message,
                at: Some(at),
            } => write!(
                f,
                "is not a statement SQLite prepares: {message} (at character {at})"
            ),
            Refusal::Sqlite { message, at: None } => {
                write!(f, "is not a statement SQLite prepares: {message}")
            }
            Refusal::Trailing { what, at } => {
                let what = match what {
                    Trail::Comment => "a comment",
                    Trail::DotCommand => "a dot-command of the sqlite3 shell",
                    Trail::Statement => "a second statement",
                };
                write!(f, "holds {what} after the CREATE TABLE (at character {at})")
            }
            Refusal::NotCreateTable => f.write_str("does not start with a CREATE TABLE statement"),
            Refusal::AsSelect => f.write_str(
                "is a CREATE TABLE … AS SELECT, which takes its columns and rows from a query",
            ),
            Refusal::Temp => f.write_str("creates a temporary table"),
            Refusal::SchemaName { written } => write!(
                f,
                "qualifies the table name with a schema ({written:?} before the name)"
            ),
            Refusal::NotAsStored { stored } => write!(
                f,
                "has more around its CREATE TABLE than the statement SQLite stores, {stored:?}"
            ),
            Refusal::OtherName { created } => {
                write!(f, "creates another table, {created:?}")
            }
            Refusal::Function {
                name,
                place,
                unknown,
            } => {
                if *unknown {
                    write!(
                        f,
                        "calls the function {name}() in {place}, which SQLite does not know"
                    )
                } else {
                    write!(
                        f,
                        "calls the function {name}() in {place}, which is not one of SQLite's built-in scalar functions"
                    )
                }
            }
            Refusal::Action { action } => {
                write!(f, "asks SQLite for more than creating the table ({action})")
            }
            Refusal::Columns { detail } => write!(
                f,
                "creates columns other than the manifest lists ({detail})"
            ),
        }
    }
}

impl std::error::Error for Refusal {}

/// What the authorizer is checking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The judge's own statements: everything is allowed.
    Own,
    /// Preparing the table's sql: creating one table in `main` (and its
    /// schema row), and built-in scalar functions.
    Create,
    /// Preparing the INSERT and UPDATE that compile the table's DEFAULT,
    /// CHECK and generated expressions: writing and reading that table,
    /// and built-in scalar functions.
    Use,
}

/// What the authorizer saw while judging one table.
#[derive(Debug)]
struct Seen {
    mode: Mode,
    /// The table the statement creates (from `SQLITE_CREATE_TABLE`).
    created: Option<String>,
    /// The first action denied, as a refusal.
    denied: Option<Refusal>,
    /// The table's CREATE TABLE ran: the table is in the database.
    stepped: bool,
}

fn lock(seen: &Mutex<Seen>) -> MutexGuard<'_, Seen> {
    // The state is plain data, whole after any panic.
    seen.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The tables SQLite itself writes when it creates a table (and, for an
/// AUTOINCREMENT table, when it inserts a row).
fn is_schema_table(name: &str) -> bool {
    name.eq_ignore_ascii_case("sqlite_master")
        || name.eq_ignore_ascii_case("sqlite_schema")
        || name.eq_ignore_ascii_case("sqlite_sequence")
}

fn authorize(seen: &Mutex<Seen>, ctx: &AuthContext<'_>) -> Authorization {
    let mut s = lock(seen);
    let main = ctx.database_name.is_none_or(|d| d == "main");
    let refusal = match (s.mode, &ctx.action) {
        (Mode::Own, _) => return Authorization::Allow,
        (_, AuthAction::Function { function_name }) => {
            if is_builtin_scalar(function_name) {
                return Authorization::Allow;
            }
            Refusal::Function {
                name: function_name.to_string(),
                place: place(s.mode),
                unknown: false,
            }
        }
        (Mode::Create, _) if ctx.database_name == Some("temp") => Refusal::Temp,
        // The first AUTOINCREMENT table brings SQLite's own counter table.
        (Mode::Create, AuthAction::CreateTable { table_name })
            if main
                && table_name.eq_ignore_ascii_case("sqlite_sequence")
                && s.created.is_some() =>
        {
            return Authorization::Allow;
        }
        (Mode::Create, AuthAction::CreateTable { table_name }) if main => {
            if s.created.is_none() {
                s.created = Some(table_name.to_string());
                return Authorization::Allow;
            }
            Refusal::Action {
                action: format!("a second CREATE TABLE {table_name:?}"),
            }
        }
        (Mode::Create, AuthAction::CreateTempTable { .. }) => Refusal::Temp,
        // The index of a UNIQUE or PRIMARY KEY constraint.
        (Mode::Create, AuthAction::CreateIndex { table_name, .. })
            if main && s.created.as_deref() == Some(*table_name) =>
        {
            return Authorization::Allow;
        }
        (Mode::Create, AuthAction::Select) => Refusal::AsSelect,
        (Mode::Create, AuthAction::Insert { table_name })
        | (Mode::Create, AuthAction::Update { table_name, .. })
        | (Mode::Create, AuthAction::Read { table_name, .. })
            if main && is_schema_table(table_name) =>
        {
            return Authorization::Allow;
        }
        // A CHECK constraint or generated column reads the new table's
        // columns.
        (Mode::Create, AuthAction::Read { table_name, .. })
            if main && s.created.as_deref() == Some(*table_name) =>
        {
            return Authorization::Allow;
        }
        (Mode::Use, AuthAction::Insert { table_name })
        | (Mode::Use, AuthAction::Update { table_name, .. })
        | (Mode::Use, AuthAction::Read { table_name, .. })
            if main
                && (s.created.as_deref() == Some(*table_name)
                    || table_name.eq_ignore_ascii_case("sqlite_sequence")) =>
        {
            return Authorization::Allow;
        }
        (_, action) => Refusal::Action {
            action: format!("{action:?}"),
        },
    };
    s.denied.get_or_insert(refusal);
    Authorization::Deny
}

fn place(mode: Mode) -> &'static str {
    match mode {
        // CHECK and generated expressions were compiled with the table.
        Mode::Use => "a DEFAULT",
        _ => "an expression of the table (a DEFAULT, CHECK or generated column)",
    }
}

/// Makes `conn` unable to attach a database, run a trigger or a view,
/// enforce or act on a foreign key, or write its own schema, and puts it
/// in SQLite's defensive mode; fails when SQLite does not take a setting.
/// (An extension cannot be loaded: rusqlite is built without that.)
pub(crate) fn harden(conn: &mut Connection) -> rusqlite::Result<()> {
    conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
    for (config, on) in [
        (DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true),
        (DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_FKEY, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_ATTACH_CREATE, false),
        (DbConfig::SQLITE_DBCONFIG_ENABLE_ATTACH_WRITE, false),
        (DbConfig::SQLITE_DBCONFIG_WRITABLE_SCHEMA, false),
    ] {
        if conn.set_db_config(config, on)? != on {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
                Some(format!("SQLite did not take the setting {config:?} = {on}")),
            ));
        }
    }
    Ok(())
}

/// Judges the `sql` of archive tables with SQLite's own parser, on one
/// in-memory connection reused across tables (in one transaction that is
/// rolled back every [`BATCH`] tables, and before a name it holds). The connection can neither attach a database, nor load an
/// extension, nor run a trigger or a view; its authorizer refuses every
/// action but creating the one table and every function but SQLite's
/// built-in scalar ones.
///
/// Not `Sync`: one judge per thread.
pub struct TableSqlJudge {
    conn: Connection,
    seen: Arc<Mutex<Seen>>,
    /// The tables in the database (names folded to ASCII lower case): at
    /// most [`BATCH`], each created by a table's own sql, which passed.
    batch: RefCell<HashSet<String>>,
}

/// How many judged tables the database holds before it is emptied. Tables
/// cannot see each other (a CHECK, DEFAULT or generated expression holds no
/// subquery; foreign keys are off), so only a repeated name matters, and
/// that empties it first. Small: creating a table scans the schema.
const BATCH: usize = 32;

impl fmt::Debug for TableSqlJudge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableSqlJudge").finish_non_exhaustive()
    }
}

impl TableSqlJudge {
    /// A judge with its own in-memory database. Fails only when SQLite
    /// cannot open one or refuses the hardening settings.
    pub fn new() -> rusqlite::Result<TableSqlJudge> {
        let mut conn = Connection::open_in_memory()?;
        harden(&mut conn)?;
        // The built-in functions this SQLite lacks (it may be compiled
        // without the math functions) are known here by name, so a table
        // that calls them is judged as the documentation allows. They are
        // never called: the judge prepares, it does not run.
        let known: Vec<String> = conn
            .prepare("SELECT DISTINCT name FROM pragma_function_list")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for f in BUILTIN_SCALAR_FUNCTIONS {
            if f.starts_with('-') || known.iter().any(|k| k.eq_ignore_ascii_case(f)) {
                continue;
            }
            conn.create_scalar_function(
                *f,
                -1,
                FunctionFlags::SQLITE_UTF8
                    | FunctionFlags::SQLITE_DETERMINISTIC
                    | FunctionFlags::SQLITE_INNOCUOUS,
                |_| Ok(None::<i64>),
            )?;
        }
        let seen = Arc::new(Mutex::new(Seen {
            mode: Mode::Own,
            created: None,
            denied: None,
            stepped: false,
        }));
        let hook = seen.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| authorize(&hook, &ctx)))?;
        Ok(TableSqlJudge {
            conn,
            seen,
            batch: RefCell::new(HashSet::new()),
        })
    }

    /// Judges `table.sql`: `Ok` when it is exactly one `CREATE TABLE` of
    /// `table.name` (compared ignoring ASCII case, as SQLite does) in the
    /// main schema, not `AS SELECT`, whose columns are `table.columns`
    /// (name, declared type, NOT NULL, key position, generated) as
    /// `PRAGMA table_xinfo` reports them, whose DEFAULT, CHECK and
    /// generated expressions call only SQLite's built-in scalar functions,
    /// and after which comes nothing but whitespace. Foreign keys,
    /// `WITHOUT ROWID`, `STRICT`, collations and constraints of every kind
    /// pass.
    pub fn judge(&self, table: &Table) -> Result<(), Refusal> {
        let sql = table.sql.as_str();
        if let Some(at) = sql.find('\0') {
            return Err(Refusal::Nul { at: chars(sql, at) });
        }
        let folded = table.name.to_ascii_lowercase();
        {
            // A batch of judged tables is dropped at once (a ROLLBACK
            // resets the schema, which the next statement reloads: per
            // table, that was a third of the cost). Before a name the batch
            // holds, or when it is full, the database is emptied.
            let mut batch = self.batch.borrow_mut();
            if batch.len() >= BATCH || batch.contains(&folded) {
                self.set_mode(Mode::Own);
                if !self.conn.is_autocommit() {
                    let _ = self.conn.execute_batch("ROLLBACK");
                }
                batch.clear();
            }
        }
        self.begin(Mode::Create);
        let verdict = self.judge_in_transaction(table);
        self.set_mode(Mode::Own);
        if lock(&self.seen).stepped {
            self.batch.borrow_mut().insert(folded);
        }
        verdict
    }

    fn set_mode(&self, mode: Mode) {
        lock(&self.seen).mode = mode;
    }

    fn begin(&self, mode: Mode) {
        {
            let mut s = lock(&self.seen);
            s.mode = Mode::Own;
            s.created = None;
            s.denied = None;
            s.stepped = false;
        }
        if self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("BEGIN");
        }
        self.set_mode(mode);
    }

    /// The refusal the authorizer recorded, else `e` as SQLite's message.
    fn refusal(&self, e: &rusqlite::Error, sql: &str, place: Option<&'static str>) -> Refusal {
        if let Some(r) = lock(&self.seen).denied.take() {
            return r;
        }
        let (message, at) = match e {
            rusqlite::Error::SqlInputError { msg, offset, .. } => (
                msg.clone(),
                usize::try_from(*offset)
                    .ok()
                    .filter(|&o| o <= sql.len() && sql.is_char_boundary(o))
                    .map(|o| chars(sql, o)),
            ),
            rusqlite::Error::SqliteFailure(_, Some(msg)) => (msg.clone(), None),
            other => (other.to_string(), None),
        };
        if let Some(name) = message.strip_prefix("no such function: ") {
            return Refusal::Function {
                name: name.to_string(),
                place: place.unwrap_or_else(|| self::place(Mode::Create)),
                unknown: true,
            };
        }
        Refusal::Sqlite { message, at }
    }

    fn judge_in_transaction(&self, table: &Table) -> Result<(), Refusal> {
        let sql = table.sql.as_str();
        // Batch prepares one statement at a time (Connection::prepare
        // would prepare the rest too, recursing once per statement).
        let mut batch = Batch::new(&self.conn, sql);
        let mut stmt = match batch.next() {
            Ok(Some(stmt)) => stmt,
            Ok(None) => {
                return Err(Refusal::Sqlite {
                    message: "no statement".into(),
                    at: None,
                })
            }
            Err(e) => {
                // SQLite asks the authorizer before it looks for a table of
                // that name: a table of another name is that.
                let created = lock(&self.seen).created.clone();
                if let Some(created) = created.filter(|c| !c.eq_ignore_ascii_case(&table.name)) {
                    if lock(&self.seen).denied.is_none() {
                        return Err(Refusal::OtherName { created });
                    }
                }
                return Err(self.refusal(&e, sql, None));
            }
        };
        // SQLite keeps the statement's text up to where it stopped reading
        // (the tail starts there); the text has no NUL and a CREATE TABLE
        // no parameters, so the expanded text is that text.
        let text = stmt.expanded_sql().unwrap_or_default();
        let Some(tail) = sql.strip_prefix(text.as_str()) else {
            return Err(Refusal::Sqlite {
                message: "SQLite did not report the statement's text".into(),
                at: None,
            });
        };
        if let Some(rel) = tail.find(|c: char| !c.is_ascii_whitespace()) {
            let rest = &tail[rel..];
            let what = if rest.starts_with("--") || rest.starts_with("/*") {
                Trail::Comment
            } else if rest.starts_with('.') {
                Trail::DotCommand
            } else {
                Trail::Statement
            };
            return Err(Refusal::Trailing {
                what,
                at: chars(sql, text.len() + rel),
            });
        }
        let created = lock(&self.seen).created.clone();
        let Some(created) = created else {
            return Err(Refusal::NotCreateTable);
        };
        if !created.eq_ignore_ascii_case(&table.name) {
            return Err(Refusal::OtherName { created });
        }
        if let Err(e) = stmt.raw_execute() {
            return Err(self.refusal(&e, sql, None));
        }
        lock(&self.seen).stepped = true;
        drop(stmt);

        self.set_mode(Mode::Own);
        let (stored, cols) = self
            .created(&created)
            .map_err(|e| self.refusal(&e, sql, None))?;
        check_as_stored(&text, &stored)?;
        check_columns(table, &cols).map_err(|detail| Refusal::Columns { detail })?;

        // DEFAULT expressions are compiled only into an INSERT, and
        // CHECK and generated expressions again into an INSERT and an
        // UPDATE: prepare (never step) both, under the authorizer.
        let q = quote_ident(&created);
        let writable: Vec<String> = table
            .columns
            .iter()
            .filter(|c| c.generated.is_none())
            .map(|c| {
                let c = quote_ident(&c.name);
                format!("{c} = {c}")
            })
            .collect();
        self.set_mode(Mode::Use);
        let mut statements = vec![format!("INSERT INTO main.{q} DEFAULT VALUES")];
        if !writable.is_empty() {
            statements.push(format!("UPDATE main.{q} SET {}", writable.join(", ")));
        }
        for s in statements {
            if let Err(e) = self.conn.prepare(&s) {
                return Err(self.refusal(&e, sql, Some("a DEFAULT")));
            }
        }
        Ok(())
    }

    /// What `sqlite_schema` holds for the table `created` and its columns
    /// as `PRAGMA table_xinfo` reports them (name, type, notnull, pk,
    /// hidden), in one query.
    #[allow(clippy::type_complexity)]
    fn created(
        &self,
        created: &str,
    ) -> rusqlite::Result<(String, Vec<(String, String, i64, i64, i64)>)> {
        // Two plain statements: a join through the table-valued pragma
        // costs more to compile (and every statement is compiled again
        // after the schema changed, that is, for every table).
        let stored: String = self.conn.query_row(
            "SELECT sql FROM main.sqlite_schema WHERE name = ?1",
            [created],
            |r| r.get(0),
        )?;
        let mut st = self.conn.prepare(&format!(
            "PRAGMA main.table_xinfo({})",
            quote_literal(created)
        ))?;
        let mut cols = Vec::new();
        let mut rows = st.query([])?;
        // cid, name, type, notnull, dflt_value, pk, hidden
        while let Some(r) = rows.next()? {
            cols.push((r.get(1)?, r.get(2)?, r.get(3)?, r.get(5)?, r.get(6)?));
        }
        Ok((stored, cols))
    }
}

/// Compares the columns SQLite created (`cols`: name, type, notnull, pk,
/// hidden) with the manifest's; the difference, when there is one.
fn check_columns(table: &Table, cols: &[(String, String, i64, i64, i64)]) -> Result<(), String> {
    if cols.len() != table.columns.len() {
        return Err(format!(
            "{} columns, where the manifest lists {}",
            cols.len(),
            table.columns.len()
        ));
    }
    for (c, (name, decl, notnull, pk, hidden)) in table.columns.iter().zip(cols) {
        let generated = match hidden {
            2 => Some(Generated::Virtual),
            3 => Some(Generated::Stored),
            _ => None,
        };
        let show = |g: Option<Generated>| match g {
            None => "not generated",
            Some(Generated::Virtual) => "generated virtual",
            Some(Generated::Stored) => "generated stored",
        };
        let what = if c.name != *name {
            format!("column {name:?} where the manifest lists {:?}", c.name)
        // SQLite reports the six STRICT type names (int, text …)
        // upper-cased, whatever case the sql declares them in.
        } else if !c.decl_type.eq_ignore_ascii_case(decl) {
            format!(
                "column {name:?} is declared {decl:?}, the manifest says {:?}",
                c.decl_type
            )
        } else if i64::from(c.notnull) != *notnull {
            format!(
                "column {name:?} has notnull {notnull}, the manifest says {}",
                u8::from(c.notnull)
            )
        } else if i64::from(c.pk) != *pk {
            format!("column {name:?} has pk {pk}, the manifest says {}", c.pk)
        } else if c.generated != generated {
            format!(
                "column {name:?} is {}, the manifest says {}",
                show(generated),
                show(c.generated)
            )
        } else {
            continue;
        };
        return Err(what);
    }
    Ok(())
}

/// Checks that `text` (the statement, from the start of the sql) is
/// `stored` (what `sqlite_schema` holds: `CREATE TABLE ` and the text from
/// the table name on) with nothing but `CREATE TABLE [IF NOT EXISTS]`
/// before the name, in any case and spacing, and nothing but whitespace and
/// a `;` after the definition (SQLite reads a comment there as part of the
/// statement).
fn check_as_stored(text: &str, stored: &str) -> Result<(), Refusal> {
    let not = || Refusal::NotAsStored {
        stored: stored.to_string(),
    };
    let body = stored.strip_prefix("CREATE TABLE ").ok_or_else(not)?;
    // The body is copied from the statement: its first occurrence is it
    // (it runs to the definition's end, so no earlier copy fits).
    let start = text.find(body).ok_or_else(not)?;
    let (before, after) = (&text[..start], &text[start + body.len()..]);
    let mut after_at = start + body.len();
    let ws = |s: &str| {
        s.len()
            - s.trim_start_matches(|c: char| c.is_ascii_whitespace())
                .len()
    };
    after_at += ws(after);
    if text[after_at..].starts_with(';') {
        after_at += 1;
        after_at += ws(&text[after_at..]);
    }
    if after_at < text.len() {
        let rest = &text[after_at..];
        return Err(Refusal::Trailing {
            what: if rest.starts_with("--") || rest.starts_with("/*") {
                Trail::Comment
            } else {
                Trail::Statement
            },
            at: chars(text, after_at),
        });
    }
    let mut words = before.split_ascii_whitespace();
    let mut keyword = |k: &str| words.next().is_some_and(|w| w.eq_ignore_ascii_case(k));
    if !(keyword("CREATE") && keyword("TABLE")) {
        return Err(not());
    }
    let rest: Vec<&str> = words.collect();
    let plain = rest.is_empty()
        || (rest.len() == 3
            && rest[0].eq_ignore_ascii_case("IF")
            && rest[1].eq_ignore_ascii_case("NOT")
            && rest[2].eq_ignore_ascii_case("EXISTS"));
    if plain && before.ends_with(|c: char| c.is_ascii_whitespace()) {
        return Ok(());
    }
    let written = rest.join(" ");
    if written.ends_with('.') {
        return Err(Refusal::SchemaName {
            written: written.trim_end_matches('.').trim_end().to_string(),
        });
    }
    Err(not())
}

/// The character position of byte offset `byte` of `s`.
fn chars(s: &str, byte: usize) -> usize {
    s.get(..byte).map_or(0, |p| p.chars().count())
}
