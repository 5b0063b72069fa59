//! Finding codes: the stable snake_case names of every rule (SPEC.md §9).

use std::fmt;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The archive may still be imported; `verify --strict` fails on it.
    Warning,
    /// The archive is invalid.
    Error,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! codes {
    ($( $(#[doc = $doc:literal])* $variant:ident = $name:literal, $sev:ident; )*) => {
        /// A finding code. Each names one rule of SPEC.md; the text form is
        /// stable across releases.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Code {
            $( $(#[doc = $doc])* $variant, )*
        }

        impl Code {
            /// Every code, in SPEC.md order.
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The stable snake_case name.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $name, )* }
            }

            /// The severity findings of this code have.
            pub fn severity(self) -> Severity {
                match self { $( Code::$variant => Severity::$sev, )* }
            }

            /// The one-line description SPEC.md gives.
            pub fn description(self) -> &'static str {
                match self { $( Code::$variant => concat!($($doc),*).trim_ascii(), )* }
            }

            /// The code called `name`.
            pub fn from_name(name: &str) -> Option<Code> {
                match name { $( $name => Some(Code::$variant), )* _ => None }
            }
        }
    };
}

codes! {
    /// A line is not JSON (RFC 8259 syntax).
    JsonSyntax = "json_syntax", Error;
    /// A line is not UTF-8.
    JsonInvalidUtf8 = "json_invalid_utf8", Error;
    /// A line starts with a byte-order mark.
    JsonBom = "json_bom", Error;
    /// An object names a member twice.
    JsonDuplicateMember = "json_duplicate_member", Error;
    /// A string escapes a lone surrogate.
    JsonLoneSurrogate = "json_lone_surrogate", Error;
    /// A number overflows a double.
    JsonNumberRange = "json_number_range", Error;
    /// Arrays and objects nest deeper than 64.
    JsonDepth = "json_depth", Error;
    /// A line parses but is not the canonical JSON of its record.
    NotCanonical = "not_canonical", Error;
    /// An empty line.
    EmptyLine = "empty_line", Error;
    /// A carriage return (CR) in a line, such as a CRLF line ending.
    CarriageReturn = "carriage_return", Error;
    /// The file does not end with LF.
    MissingFinalNewline = "missing_final_newline", Error;
    /// A line is longer than its limit.
    LineTooLong = "line_too_long", Error;
    /// Bytes after the closing line.
    TrailingData = "trailing_data", Error;
    /// The file is empty or its first line is not a manifest.
    ManifestMissing = "manifest_missing", Error;
    /// The file ends without a closing line.
    ClosingMissing = "closing_missing", Error;
    /// A record's `kind` is not one this position allows.
    RecordKind = "record_kind", Error;
    /// A record has a member the format does not define.
    UnknownMember = "unknown_member", Error;
    /// A record lacks a required member.
    MissingMember = "missing_member", Error;
    /// A member has the wrong JSON type.
    MemberType = "member_type", Error;
    /// The manifest's `format` is not one this verifier reads.
    UnsupportedFormat = "unsupported_format", Error;
    /// The manifest's `version` is not 2.
    UnsupportedVersion = "unsupported_version", Error;
    /// A name is empty, too long or has a control character.
    InvalidName = "invalid_name", Error;
    /// `exportedAt` is not a real `toISOString` timestamp.
    InvalidExportedAt = "invalid_exported_at", Error;
    /// A count, size, index, offset or epoch is not a safe integer ≥ 0.
    InvalidInteger = "invalid_integer", Error;
    /// `schema` is not the SHA-256 of the tables' names and SQL.
    SchemaMismatch = "schema_mismatch", Error;
    /// Tables are not sorted by name, or two names differ only in ASCII case.
    TableOrder = "table_order", Error;
    /// A table's `sql` is not a `CREATE TABLE` statement, or is a virtual table.
    InvalidTableSql = "invalid_table_sql", Error;
    /// A table's `sql`, judged by SQLite's parser, is not exactly one plain `CREATE TABLE` of that table with its columns: a second statement, a comment or command after it, `AS SELECT`, a temporary table, a schema name, another table's name, other columns, or a function that is not one of SQLite's built-in scalar functions.
    TableSql = "table_sql", Error;
    /// A table has no columns.
    EmptyColumns = "empty_columns", Error;
    /// Two columns of a table have names equal ignoring ASCII case.
    DuplicateColumn = "duplicate_column", Error;
    /// A column name starts with `rer_portability_`.
    ReservedColumn = "reserved_column", Error;
    /// A column's `notnull` is not 0 or 1.
    InvalidNotnull = "invalid_notnull", Error;
    /// Primary-key positions are not exactly 1..k.
    InvalidPk = "invalid_pk", Error;
    /// A generated column is in the primary key.
    GeneratedPrimaryKey = "generated_primary_key", Error;
    /// `generated` is not `virtual` or `stored`.
    InvalidGenerated = "invalid_generated", Error;
    /// `dependencies` are not sorted and unique.
    DependencyOrder = "dependency_order", Error;
    /// A table depends on an excluded table.
    ExcludedForeignKey = "excluded_foreign_key", Error;
    /// A table depends on a table the archive does not hold.
    MissingDependency = "missing_dependency", Warning;
    /// `rowidAlias` is not the alias the columns imply.
    RowidAliasMismatch = "rowid_alias_mismatch", Error;
    /// A primary-key table whose columns shadow `rowid`, `_rowid_` and `oid`: the import cannot copy it.
    UnsupportedCopyRowid = "unsupported_copy_rowid", Error;
    /// A table's column list exceeds D1's SQL statement limit in the producer's copy statements.
    TransferSqlLimit = "transfer_sql_limit", Error;
    /// A table name SQLite or D1 reserves (`sqlite_…`, `_cf_…`): no import can create it.
    ReservedTable = "reserved_table", Error;
    /// A table the producer excludes by default is archived (only an explicit include does that).
    DefaultExcludedTable = "default_excluded_table", Warning;
    /// Development data the import refuses: `oa_dev_credentials` holds rows,
    /// or an `oa_sessions` or `oa_credentials` row has `kind` `"dev"`.
    DevData = "dev_data", Error;
    /// Objects are not sorted by (bucket, key) or repeat one.
    ObjectOrder = "object_order", Error;
    /// Payloads are not in the producer's order or repeat a name.
    PayloadOrder = "payload_order", Error;
    /// A `sha256` is not 64 lowercase hex digits.
    InvalidSha256 = "invalid_sha256", Error;
    /// `httpMetadata` or `customMetadata` is not an object of strings.
    InvalidMetadata = "invalid_metadata", Error;
    /// `excludedTables` is not sorted and unique.
    ExcludedTableOrder = "excluded_table_order", Error;
    /// A table is both archived and excluded.
    ExcludedTablePresent = "excluded_table_present", Error;
    /// An excluded column names a table or column the manifest lacks.
    ExcludedColumnUnknown = "excluded_column_unknown", Error;
    /// An excluded column is NOT NULL, in the primary key or generated.
    ExcludedColumnRequired = "excluded_column_required", Error;
    /// An excluded column is listed twice.
    ExcludedColumnDuplicate = "excluded_column_duplicate", Error;
    /// `requiredConfiguration` repeats a name.
    DuplicateConfiguration = "duplicate_configuration", Error;
    /// A part's `index` is not the next one (or, pushed, out of range).
    PartIndex = "part_index", Error;
    /// A part has no items.
    EmptyPart = "empty_part", Error;
    /// A part mixes tables, rows and binaries, or holds several binaries.
    MixedPart = "mixed_part", Error;
    /// A part holds more than 1,000 rows: more than the producer packs.
    PartRowCount = "part_row_count", Warning;
    /// Items are out of the archive's order: tables, then objects, then payloads.
    ItemOrder = "item_order", Error;
    /// A row names a table the manifest does not list.
    UnknownTable = "unknown_table", Error;
    /// An object item names an object the manifest does not list.
    UnknownObject = "unknown_object", Error;
    /// A payload item names a payload the manifest does not list.
    UnknownPayload = "unknown_payload", Error;
    /// A row's `index` breaks the sequence 0, 1, 2 … of its table.
    RowIndex = "row_index", Error;
    /// A table has more or fewer rows than its `count`.
    RowCount = "row_count", Error;
    /// A row's columns are not the table's writable, non-excluded columns.
    RowColumns = "row_columns", Error;
    /// A NOT NULL column holds null.
    RowNotNull = "row_not_null", Error;
    /// A cell's type does not fit its column's affinity.
    RowType = "row_type", Error;
    /// An INTEGER cell or a rowid is not a safe integer.
    UnsafeInteger = "unsafe_integer", Error;
    /// Base64 is not canonical (standard alphabet, padded, unused bits zero).
    InvalidBase64 = "invalid_base64", Error;
    /// A `rowid` is not greater than the previous one of its table.
    RowidOrder = "rowid_order", Error;
    /// Two rows of a table have the same row key.
    DuplicateRowKey = "duplicate_row_key", Error;
    /// Rows of a primary-key table are not in key order.
    RowKeyOrder = "row_key_order", Warning;
    /// A chunk's `offset` is not the running total of the bytes before it.
    ChunkOffset = "chunk_offset", Error;
    /// A chunk before the last of its object or payload differs in size from
    /// the first, or the last is larger: the producer cuts equal chunks.
    ChunkSize = "chunk_size", Warning;
    /// A chunk carries no bytes (allowed only for an empty object or payload).
    EmptyChunk = "empty_chunk", Error;
    /// An object or payload has no chunks, or stops short of its size.
    BinaryMissing = "binary_missing", Error;
    /// The bytes of an object or payload do not add up to its `size`.
    SizeMismatch = "size_mismatch", Error;
    /// The SHA-256 of an object's or payload's bytes is not its `sha256`.
    Sha256Mismatch = "sha256_mismatch", Error;
    /// The closing's `partCount` disagrees with the manifest or the parts.
    PartCountMismatch = "part_count_mismatch", Error;
    /// `contentHash` is not the hash of the archive's content.
    ContentHashMismatch = "content_hash_mismatch", Error;
    /// `archiveHash` is not the hash of the archive's lines.
    ArchiveHashMismatch = "archive_hash_mismatch", Error;
    /// Different bytes arrived for a part index already accepted.
    PartConflict = "part_conflict", Error;
    /// A part never arrived.
    PartMissing = "part_missing", Error;
    /// The archive is an export of another product than the policy expects.
    PolicyProduct = "policy_product", Error;
    /// The archive's schema is not one the policy accepts.
    PolicySchema = "policy_schema", Error;
    /// The closing's `contentHash` is not the one the policy expects.
    PolicyContentHash = "policy_content_hash", Error;
    /// A table or column the policy excludes is in the archive.
    PolicyExclusion = "policy_exclusion", Error;
    /// The archive's required configuration is not the policy's.
    PolicyConfiguration = "policy_configuration", Error;
    /// A table the policy includes or may replace is not archived.
    PolicyTableMissing = "policy_table_missing", Error;
    /// An object is in a bucket the policy does not export, or outside its
    /// bucket's prefix.
    PolicyBucket = "policy_bucket", Error;
    /// The archive's payloads are not the policy's extra payloads.
    PolicyPayload = "policy_payload", Error;
    /// A bucket's `objectReferences` fails: a row references a key that is
    /// not an object of the bucket, or an object of the bucket is
    /// referenced by no row.
    ObjectReferences = "object_references", Error;
    /// A bucket's `objectReferences` names a table or column the archive
    /// does not have.
    ReferenceColumnMissing = "reference_column_missing", Error;
    /// A bucket's `objectReferences` names a column the archive leaves out:
    /// an excluded table, an excluded (secret) column or a generated
    /// column.
    ReferenceColumnExcluded = "reference_column_excluded", Error;
    /// `verify --later`: the later archive's `sourceIdentity` is not the
    /// earlier archive's.
    LineageSourceIdentity = "lineage_source_identity_mismatch", Error;
    /// `verify --later`: the later archive's `epoch` is lower than the
    /// earlier archive's.
    LineageEpochBackwards = "lineage_epoch_backwards", Error;
    /// `verify --later`: the later archive's `journal` does not start with
    /// the earlier archive's entries, in order.
    LineageJournalRewritten = "lineage_journal_rewritten", Error;
    /// `verify --later`: the later archive's `migrations` do not start with
    /// the earlier archive's, in order.
    LineageMigrationsRewritten = "lineage_migrations_rewritten", Error;
    /// `verify --integrity`: a row's foreign key names no row of its
    /// parent table (SQLite's "FOREIGN KEY constraint failed").
    ForeignKeyViolation = "foreign_key_violation", Error;
    /// `verify --integrity`: a foreign key whose parent key SQLite refuses
    /// (neither the parent's primary key nor a UNIQUE index: "foreign key
    /// mismatch").
    ForeignKeyMismatch = "foreign_key_mismatch", Error;
}

/// How much harm an importer does by accepting an archive that breaks a
/// rule: the ranking `fuzz-consumer` sorts a consumer's misses by, most
/// harmful first (the variants are in that order, so `Ord` ranks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Harm {
    /// First: accepting it can do harm beyond the archive's own data. SQL
    /// the importer runs, names that become identifiers or paths (control
    /// characters, reserved `sqlite_`/`_cf_` names), objects outside their
    /// bucket, development credentials, a member named twice (two parsers
    /// read two different values), two rows with one key (one silently
    /// overwrites the other), integers a JavaScript importer rounds into
    /// another key.
    Unsafe,
    /// Second: the data imported is not the data exported, and nothing
    /// else says so. A hash or size that does not match (an edit after
    /// export, a damaged transfer), a truncated file (no closing line, no
    /// final newline, a part or chunk missing), bytes after the end, wrong
    /// counts or indexes (rows lost or repeated).
    Corrupt,
    /// Third: the lines are not the format's framing (JSON syntax, UTF-8,
    /// a byte-order mark, CR, empty or overlong lines, depth, number range,
    /// lone surrogates): readers disagree on what such a line says, so what
    /// is imported depends on the importer's parser.
    Framing,
    /// Fourth: well-formed records that break a rule of the format or the
    /// schema (a member missing or of the wrong type, a cell that does not
    /// fit its column, an unknown table, a bad reference). The import
    /// stores values the schema forbids or fails half-way, but the fault
    /// is visible and no data is silently changed.
    Invalid,
    /// Last: everything is there and right; only the order or the spelling
    /// differs from the producer's (canonical JSON, sorted tables, objects,
    /// payloads, dependencies and items, how parts are cut). Accepting it
    /// loses nothing but the archive's reproducibility; the order codes
    /// also cover a repeated name, which ranks here by their usual case (a
    /// swap).
    Cosmetic,
}

impl Harm {
    /// Every class, most harmful first.
    pub const ALL: [Harm; 5] = [
        Harm::Unsafe,
        Harm::Corrupt,
        Harm::Framing,
        Harm::Invalid,
        Harm::Cosmetic,
    ];

    /// The snake_case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Harm::Unsafe => "unsafe",
            Harm::Corrupt => "corrupt",
            Harm::Framing => "framing",
            Harm::Invalid => "invalid",
            Harm::Cosmetic => "cosmetic",
        }
    }
}

impl fmt::Display for Harm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Code {
    /// The harm of accepting an archive with this finding: the one place
    /// codes are ranked (see [`Harm`] for why each class ranks where it
    /// does). Every code is listed, so a new code must be ranked.
    pub fn harm(self) -> Harm {
        use Code as C;
        match self {
            C::TableSql
            | C::InvalidTableSql
            | C::InvalidName
            | C::ReservedTable
            | C::ReservedColumn
            | C::DuplicateColumn
            | C::DevData
            | C::JsonDuplicateMember
            | C::DuplicateRowKey
            | C::UnsafeInteger
            | C::ExcludedTablePresent
            | C::PolicyExclusion
            | C::PolicyBucket => Harm::Unsafe,
            C::ContentHashMismatch
            | C::ArchiveHashMismatch
            | C::Sha256Mismatch
            | C::SizeMismatch
            | C::InvalidSha256
            | C::SchemaMismatch
            | C::BinaryMissing
            | C::ChunkOffset
            | C::EmptyChunk
            | C::ClosingMissing
            | C::MissingFinalNewline
            | C::TrailingData
            | C::ManifestMissing
            | C::PartMissing
            | C::PartConflict
            | C::PartCountMismatch
            | C::PartIndex
            | C::RowCount
            | C::RowIndex
            | C::PolicyContentHash => Harm::Corrupt,
            C::JsonSyntax
            | C::JsonInvalidUtf8
            | C::JsonBom
            | C::JsonLoneSurrogate
            | C::JsonNumberRange
            | C::JsonDepth
            | C::EmptyLine
            | C::CarriageReturn
            | C::LineTooLong => Harm::Framing,
            C::RecordKind
            | C::UnknownMember
            | C::MissingMember
            | C::MemberType
            | C::UnsupportedFormat
            | C::UnsupportedVersion
            | C::InvalidExportedAt
            | C::InvalidInteger
            | C::EmptyColumns
            | C::InvalidNotnull
            | C::InvalidPk
            | C::GeneratedPrimaryKey
            | C::InvalidGenerated
            | C::ExcludedForeignKey
            | C::MissingDependency
            | C::RowidAliasMismatch
            | C::UnsupportedCopyRowid
            | C::TransferSqlLimit
            | C::DefaultExcludedTable
            | C::InvalidMetadata
            | C::ExcludedColumnUnknown
            | C::ExcludedColumnRequired
            | C::ExcludedColumnDuplicate
            | C::DuplicateConfiguration
            | C::UnknownTable
            | C::UnknownObject
            | C::UnknownPayload
            | C::RowColumns
            | C::RowNotNull
            | C::RowType
            | C::InvalidBase64
            | C::RowidOrder
            | C::PolicyProduct
            | C::PolicySchema
            | C::PolicyConfiguration
            | C::PolicyTableMissing
            | C::PolicyPayload
            | C::ObjectReferences
            | C::ReferenceColumnMissing
            | C::ReferenceColumnExcluded
            // Two archives that do not follow each other: each is sound,
            // and the server refuses to bridge them (SPEC.md §4.6).
            | C::LineageSourceIdentity
            | C::LineageEpochBackwards
            | C::LineageJournalRewritten
            | C::LineageMigrationsRewritten
            // Rows a database with foreign_keys=ON refuses (SPEC.md §11).
            | C::ForeignKeyViolation
            | C::ForeignKeyMismatch => Harm::Invalid,
            C::NotCanonical
            | C::TableOrder
            | C::DependencyOrder
            | C::ObjectOrder
            | C::PayloadOrder
            | C::ExcludedTableOrder
            | C::ItemOrder
            | C::RowKeyOrder
            | C::EmptyPart
            | C::MixedPart
            | C::PartRowCount
            | C::ChunkSize => Harm::Cosmetic,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl From<ndarc_json::ErrorKind> for Code {
    fn from(k: ndarc_json::ErrorKind) -> Code {
        use ndarc_json::ErrorKind as K;
        match k {
            K::Syntax => Code::JsonSyntax,
            K::InvalidUtf8 => Code::JsonInvalidUtf8,
            K::Bom => Code::JsonBom,
            K::DuplicateMember => Code::JsonDuplicateMember,
            K::LoneSurrogate => Code::JsonLoneSurrogate,
            K::NumberRange => Code::JsonNumberRange,
            K::Depth => Code::JsonDepth,
            _ => Code::JsonSyntax,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_snake_case_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &c in Code::ALL {
            let n = c.as_str();
            assert!(seen.insert(n), "{n} twice");
            assert!(n
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
            assert_eq!(Code::from_name(n), Some(c));
            assert!(!c.description().is_empty());
        }
        for k in ndarc_json::ErrorKind::ALL {
            assert_eq!(Code::from(k).as_str(), k.code());
        }
    }

    #[test]
    fn harm_ranks_corruption_before_cosmetics() {
        assert!(Code::ContentHashMismatch.harm() < Code::NotCanonical.harm());
        assert!(Code::TableSql.harm() < Code::ClosingMissing.harm());
        assert_eq!(Code::ClosingMissing.harm(), Harm::Corrupt);
        assert_eq!(Code::DuplicateRowKey.harm(), Harm::Unsafe);
        assert_eq!(Code::JsonSyntax.harm(), Harm::Framing);
        assert_eq!(Code::RowType.harm(), Harm::Invalid);
        assert_eq!(Code::ItemOrder.harm(), Harm::Cosmetic);
        let mut sorted = Harm::ALL;
        sorted.sort();
        assert_eq!(sorted, Harm::ALL);
        // Every class holds some code.
        for h in Harm::ALL {
            assert!(Code::ALL.iter().any(|c| c.harm() == h), "{h}");
        }
    }
}
