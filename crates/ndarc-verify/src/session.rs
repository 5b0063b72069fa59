//! One verification session: the manifest intake, the plan, the sequential
//! rules (the assembler), the duplicate-key re-scan and the report. The
//! file pipeline, the push API and `diff` are drivers over it.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use ndarc_format::{
    check_manifest_line, rescan_duplicates_twice, Assembler, Code, Collector, Digest32, Finding,
    LineRef, LineReport, LineSummary, Manifest, ManifestOptions, ManifestOutcome, Plan,
};

use crate::integrity::{Checker, Integrity};
use crate::refs::{Refs, Seen};
use crate::rules::{RowRules, Scanned};
use crate::{Options, Report};

/// What [`read_manifest`] found.
#[derive(Debug, Default)]
pub struct ManifestRead {
    /// The manifest, when it is usable.
    pub manifest: Option<Manifest>,
    /// Findings kept (at most `max_errors`).
    pub findings: Vec<Finding>,
    /// Errors past the limit, not kept.
    pub dropped: u64,
    /// Warnings past the limit, not kept.
    pub dropped_warnings: u64,
    /// The rules that read rows beyond the line check (the policy's
    /// `objectReferences`, `--integrity`), resolved against the manifest.
    pub(crate) rules: RowRules,
    /// Why `--integrity` could not start (SQLite could not open its
    /// database).
    pub(crate) unchecked: Option<String>,
}

impl ManifestRead {
    /// Whether any error was found, kept or not.
    pub fn has_errors(&self) -> bool {
        self.dropped > 0 || self.findings.iter().any(Finding::is_error)
    }

    /// Adds the findings and counts to `c`.
    pub fn report_to(&self, c: &mut Collector) {
        for f in &self.findings {
            c.push(f.clone());
        }
        c.dropped(self.dropped);
        c.dropped_warnings(self.dropped_warnings);
    }
}

/// The only manifest intake: the manifest line `at` (its bytes without LF,
/// its line and offset) → the manifest, if usable, and the findings.
pub fn read_manifest(at: LineRef<'_>, options: &Options) -> ManifestRead {
    let limit = options.max_errors.max(1);
    let mut lr = LineReport::new(at, limit);
    let mut rules = RowRules::default();
    let mut unchecked = None;
    let manifest = if at.bytes.len() > options.max_manifest_line {
        lr.add_at(
            Code::LineTooLong,
            0,
            "",
            format!(
                "the manifest line is {} bytes, over the limit of {}; it was not parsed (raise the limit with --max-manifest-bytes if it is legitimate)",
                at.bytes.len(),
                options.max_manifest_line
            ),
        );
        None
    } else {
        // Checked without the line's tree, many times its size: the typed
        // manifest is read from the text (SPEC.md §11).
        match ndarc_json::validate_with(at.bytes, Default::default()) {
            Err(e) => {
                lr.add_at(
                    Code::from(e.kind()),
                    e.offset(),
                    "",
                    format!("the manifest line is not JSON: {}", e.message()),
                );
                None
            }
            Ok(non_canonical_at) => {
                if let Some(nc) = non_canonical_at {
                    lr.add_not_canonical(nc, "the manifest line");
                }
                match check_manifest_line(
                    at.bytes,
                    non_canonical_at.is_none(),
                    &mut lr,
                    &ManifestOptions {
                        formats: options.formats.clone(),
                        any_format: false,
                    },
                ) {
                    ManifestOutcome::Read(m) => {
                        judge_table_sql(&m, &mut lr, options.jobs);
                        if let Some(policy) = &options.policy {
                            // The policy reads the tree (a manifest checked
                            // against a policy costs its tree too).
                            if let Ok(value) = ndarc_json::parse(at.bytes) {
                                policy.check_manifest(&value, &mut lr);
                            }
                            rules.refs = Refs::new(&m, policy, at, &mut lr);
                        }
                        // The tables' sql is run (in a private database)
                        // only when every rule of the manifest held.
                        let clean = lr.dropped == 0 && !lr.findings.iter().any(Finding::is_error);
                        if options.integrity && clean {
                            match Integrity::new(&m, &mut lr) {
                                Ok(i) => rules.integrity = Some(Arc::new(i)),
                                Err(e) => unchecked = Some(e),
                            }
                        } else if options.integrity {
                            unchecked = Some(
                                "the manifest has errors, so its foreign keys were not read".into(),
                            );
                        }
                        Some(*m)
                    }
                    ManifestOutcome::Fatal => None,
                }
            }
        }
    };
    let dropped_warnings = lr.dropped_warnings;
    let (findings, dropped) = lr.into_findings();
    ManifestRead {
        manifest,
        findings,
        dropped,
        dropped_warnings,
        rules,
        unchecked,
    }
}

/// The rule SQLite's parser judges (SPEC.md §4.3, `table_sql`): the `sql`
/// of each table that passed the lexical rule (`invalid_table_sql`) is one
/// plain `CREATE TABLE` of that table. Its name and columns are compared
/// with the manifest's only when the table drew no other error: a name or
/// column the manifest gets wrong is that error's to report, not this
/// rule's too.
fn judge_table_sql(m: &Manifest, lr: &mut LineReport<'_>, jobs: usize) {
    let candidates: Vec<usize> = (0..m.tables.len())
        .filter(|&i| ndarc_format::manifest::is_create_table(&m.tables[i].sql))
        .collect();
    if candidates.is_empty() {
        return;
    }
    // SQLite judges some 10 to 40 µs a table: a manifest of many tables is
    // split over the jobs, a judge (one in-memory database) each.
    let threads = match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(candidates.len().div_ceil(JUDGED_PER_THREAD))
    .max(1);
    let per = candidates.len().div_ceil(threads);
    let verdicts: Vec<Result<Vec<(usize, ndarc_sql::Refusal)>, String>> =
        std::thread::scope(|scope| {
            let judge = |part: &[usize]| {
                let judge = ndarc_sql::TableSqlJudge::new().map_err(|e| e.to_string())?;
                Ok(part
                    .iter()
                    .filter_map(|&i| judge.judge(&m.tables[i]).err().map(|r| (i, r)))
                    .collect())
            };
            let mut parts = candidates.chunks(per);
            let first = parts.next().unwrap_or_default();
            let others: Vec<_> = parts.map(|p| scope.spawn(move || judge(p))).collect();
            let mut all = vec![judge(first)];
            for h in others {
                all.push(
                    h.join()
                        .unwrap_or_else(|_| Err("a judging thread panicked".into())),
                );
            }
            all
        });
    // Tables with an error of their own, by position (from the pointers
    // `/tables/N…` of the findings so far).
    let with_errors: HashSet<usize> = lr
        .findings
        .iter()
        .filter(|f| f.is_error())
        .filter_map(|f| {
            let rest = f.pointer.strip_prefix("/tables/")?;
            rest.split('/').next()?.parse().ok()
        })
        .collect();
    for verdict in verdicts {
        let refusals = match verdict {
            Ok(r) => r,
            Err(e) => {
                // Fail closed: the tables' sql does not count as judged.
                lr.add(
                    Code::TableSql,
                    "/tables",
                    format!("the tables' sql could not be judged: SQLite could not open an in-memory database ({e})"),
                );
                continue;
            }
        };
        for (i, refusal) in refusals {
            // Where the sql disagrees with the rest of the table (its name,
            // its columns) and the table has another error, that error says
            // what is wrong; what the sql holds beyond the table is reported
            // whatever else is wrong.
            if matches!(
                refusal,
                ndarc_sql::Refusal::Columns { .. } | ndarc_sql::Refusal::OtherName { .. }
            ) && with_errors.contains(&i)
            {
                continue;
            }
            lr.add(
                Code::TableSql,
                &format!("/tables/{i}/sql"),
                format!(
                    "the sql of table {:?} {refusal}; an archive's sql must be exactly the table's CREATE TABLE as sqlite_schema holds it",
                    m.tables[i].name
                ),
            );
        }
    }
}

/// Tables below which another thread is not worth its judge.
const JUDGED_PER_THREAD: usize = 2_000;

/// A verification in progress: the manifest was read; lines' summaries are
/// fed in archive order; [`finish`](Self::finish) gives the report.
pub struct Session {
    plan: Arc<Plan>,
    asm: Assembler,
    /// The row rules, shared with the threads that check lines.
    rules: Option<Arc<RowRules>>,
    /// The objects referenced so far (the policy's `objectReferences`).
    seen: Option<Seen>,
    /// The keys of the rows so far (`--integrity`).
    checker: Option<Checker>,
    /// Why `--integrity` could not check the rows.
    unchecked: Option<String>,
    max_errors: usize,
    started: Instant,
    /// `finish` puts the manifest in the report.
    report_manifest: bool,
}

/// How a session ended before it could read everything.
pub struct Refused {
    /// The findings so far.
    pub findings: Collector,
    /// When it started.
    pub started: Instant,
}

impl Session {
    /// Starts with the manifest line. `c` holds the findings so far (the
    /// framing of the line); `raw_digest` is the line's digest when its raw
    /// bytes differ from `at.bytes` (a CR before the LF). Refused, with the
    /// findings, when the manifest is unusable.
    pub fn start(
        at: LineRef<'_>,
        raw_digest: Option<Digest32>,
        options: &Options,
        c: Collector,
    ) -> Result<Session, Refused> {
        let read = read_manifest(at, options);
        Session::from_read(read, at, raw_digest, options, c)
    }

    /// [`start`](Self::start) with the manifest already read by
    /// [`read_manifest`] (for a driver that refuses a manifest with errors).
    pub fn from_read(
        mut read: ManifestRead,
        at: LineRef<'_>,
        raw_digest: Option<Digest32>,
        options: &Options,
        mut c: Collector,
    ) -> Result<Session, Refused> {
        let started = Instant::now();
        read.report_to(&mut c);
        let Some(manifest) = read.manifest.take() else {
            return Err(Refused {
                findings: c,
                started,
            });
        };
        let mut plan = Plan::new(manifest);
        plan.max_findings_per_line = options.max_errors.max(1);
        plan.policy = options.policy.clone();
        let plan = Arc::new(plan);
        let checker = read
            .rules
            .integrity
            .clone()
            .map(|i| Checker::new(i, &plan.manifest, options.max_errors));
        let mut asm =
            Assembler::new(plan.clone(), at.bytes, at.offset, c).manifest_line_number(at.line);
        if let Some(d) = &raw_digest {
            asm = asm.manifest_digest(d);
        }
        let seen = read.rules.refs.as_ref().map(Refs::seen);
        let rules = (!read.rules.is_empty()).then(|| Arc::new(std::mem::take(&mut read.rules)));
        Ok(Session {
            plan,
            asm,
            rules,
            seen,
            checker,
            unchecked: read.unchecked.take(),
            max_errors: options.max_errors,
            started,
            report_manifest: true,
        })
    }

    /// Leaves the manifest out of the report [`finish`](Self::finish)
    /// gives: for a driver that keeps the [`plan`](Self::plan) (and its
    /// manifest) itself, and would otherwise get a copy of it.
    pub fn without_manifest_in_report(mut self) -> Session {
        self.report_manifest = false;
        self
    }

    /// The plan lines are checked against.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    /// The manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.plan.manifest
    }

    /// Adds a finding (framing, or a driver's own).
    pub fn push(&mut self, f: Finding) {
        self.asm.findings.push(f);
    }

    /// Feeds the summary of the next line, in archive order.
    pub fn feed(&mut self, s: LineSummary) {
        self.asm.feed(s);
    }

    /// The row rules, when any is on: what reads a line's rows beyond
    /// the line check ([`RowRules::scan`], on any thread, beside the line
    /// check; its findings go into the line's summary).
    pub(crate) fn rules(&self) -> Option<Arc<RowRules>> {
        self.rules.clone()
    }

    /// Gives up what needs every row: some rows were never read (a part
    /// never arrived), so an unreferenced object or a missing parent row
    /// would be a guess.
    pub(crate) fn rows_incomplete(&mut self) {
        self.seen = None;
        self.checker = None;
    }

    /// Records what the row rules took from the line `at`
    /// ([`RowRules::scan`]'s result): the objects its rows reference and
    /// their keys.
    pub(crate) fn scanned(&mut self, scanned: Scanned, at: LineRef<'_>) {
        if let Some(seen) = &mut self.seen {
            seen.mark(&scanned.hits);
        }
        if let (Some(checker), Some(keys)) = (&mut self.checker, scanned.keys) {
            checker.add(&self.plan.manifest, &self.plan, keys, at);
        }
    }

    /// Feeds a line that was not parsed (over its limit): it still counts
    /// as a line and a term of `archiveHash`.
    pub fn feed_unreadable(&mut self, line: u64, offset: u64, digest: Option<Digest32>) {
        self.asm.feed(LineSummary {
            line,
            offset,
            digest: digest.unwrap_or([0; 32]),
            anchors: Default::default(),
            body: ndarc_format::part::Body::Unreadable,
            findings: Vec::new(),
            dropped: 0,
            dropped_warnings: 0,
        });
    }

    /// Errors so far.
    pub fn errors(&self) -> u64 {
        self.asm.findings.errors
    }

    /// The error limit is reached: reading should stop.
    pub fn is_full(&self) -> bool {
        self.asm.findings.errors >= self.max_errors as u64
    }

    /// Ends the session. `eof` is the (line, offset) after the last line;
    /// `stopped` says the reading stopped early (nothing unread is then
    /// reported missing, and no re-scan runs). `reread(line, offset)` gives
    /// back a part line's record bytes and the offset of the next line, for
    /// tables whose rows were out of key order, or the finding to report.
    pub fn finish(
        self,
        eof: (u64, u64),
        stopped: bool,
        reread: &mut dyn FnMut(u64, u64) -> Result<(Vec<u8>, u64), Finding>,
    ) -> Report {
        let (outcome, mut c) = if stopped {
            self.asm.finish_stopped(eof)
        } else {
            self.asm.finish(eof)
        };
        // Objects no row references, and rows with no parent row: only
        // once every row was read.
        if let (Some(rules), Some(seen), false) = (&self.rules, &self.seen, stopped) {
            if let Some(refs) = &rules.refs {
                refs.finish(&self.plan.manifest, seen, &mut c);
            }
        }
        let mut unchecked = self.unchecked;
        if let Some(checker) = self.checker {
            // Stopped early, the archive is invalid already.
            if !stopped {
                if let Err(e) = checker.finish(&self.plan.manifest, &self.plan, &mut c, reread) {
                    unchecked = Some(e);
                }
            }
        }
        for (t, runs, rows) in &outcome.rescan {
            let name = self.plan.manifest.tables[*t].name.clone();
            let plan = &self.plan;
            let mut failed = Vec::new();
            // Reads the table's parts (twice when a key repeats); a part
            // that cannot be read again is reported once.
            let mut readings = 0;
            let mut each_part = |f: &mut dyn FnMut(u64, u64, ndarc_format::PartKeys)| {
                readings += 1;
                for r in runs {
                    let mut offset = r.offset;
                    for l in r.line..r.line + r.count {
                        match reread(l, offset) {
                            Ok((bytes, next)) => {
                                f(l, offset, ndarc_format::part::part_keys(plan, *t, &bytes));
                                offset = next;
                            }
                            Err(e) => {
                                // The rest of the run cannot be found either.
                                if readings == 1 {
                                    failed.push(e);
                                }
                                break;
                            }
                        }
                    }
                }
            };
            rescan_duplicates_twice(&name, *rows, &mut each_part, &mut c);
            for f in failed {
                c.push(f);
            }
        }
        // The assembler is gone, so the plan is normally this session's
        // alone: its manifest is moved out rather than copied (a copy of a
        // manifest of 650,000 tables is hundreds of megabytes).
        let policy = self.plan.policy.clone();
        let manifest = if !self.report_manifest {
            None
        } else {
            Some(match Arc::try_unwrap(self.plan) {
                Ok(plan) => plan.manifest,
                Err(shared) => shared.manifest.clone(),
            })
        };
        let mut report = Report {
            errors: c.errors,
            warnings: c.warnings,
            findings: c.kept,
            stopped,
            manifest,
            closing_hashes: outcome
                .closing
                .and_then(|cl| Some((cl.content_hash?, cl.archive_hash?))),
            content_hash: Some(outcome.content_hash),
            archive_hash: Some(outcome.archive_hash),
            parts: outcome.parts,
            elapsed: self.started.elapsed(),
            policy,
            unchecked,
            ..Default::default()
        };
        fold_truncation(&mut report);
        report
    }
}

/// Findings that follow from a missing closing line: what the rest of the
/// file would have held (rows, chunks, parts) is missing because the file
/// is cut, not because the producer left it out.
const TRUNCATION_CONSEQUENCES: &[Code] =
    &[Code::RowCount, Code::BinaryMissing, Code::PartCountMismatch];

/// Leads with the cause of a truncated file (SPEC.md §9): `closing_missing`
/// first, then the findings that show where the file was cut (the last
/// line's missing LF, a cut line that does not parse), and the findings
/// that only say what the rest of the file would have held folded into
/// the cause's message, counted by code, not listed.
fn fold_truncation(report: &mut Report) {
    let Some(at) = report
        .findings
        .iter()
        .position(|f| f.code == Code::ClosingMissing)
    else {
        return;
    };
    let mut cause = report.findings.remove(at);
    let mut folded: Vec<(Code, u64)> = Vec::new();
    report.findings.retain(|f| {
        if !TRUNCATION_CONSEQUENCES.contains(&f.code) {
            return true;
        }
        match folded.iter_mut().find(|(c, _)| *c == f.code) {
            Some((_, n)) => *n += 1,
            None => folded.push((f.code, 1)),
        }
        false
    });
    let n: u64 = folded.iter().map(|(_, n)| n).sum();
    // Every folded code is an error.
    report.errors = report.errors.saturating_sub(n);
    if n > 0 {
        let list: Vec<String> = folded.iter().map(|(c, k)| format!("{k} {c}")).collect();
        cause.message.push_str(&format!(
            "; {n} {} from it not listed ({}: what the rest of the file would have held)",
            if n == 1 {
                "finding that follows"
            } else {
                "findings that follow"
            },
            list.join(", ")
        ));
    }
    report.findings.insert(0, cause);
}
