//! Invariants of a verification report, whatever the input.

use ndarc_verify::{Options, Report, Severity};

/// Checks what must hold for any report of `data` verified with `options`:
/// counts cover the kept findings, no more are kept than asked, offsets
/// lie within the data, and a report without errors has matching hashes
/// and a receipt that is canonical JSON.
pub fn check(report: &Report, data_len: usize, options: &Options) {
    let kept_errors = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count() as u64;
    let kept_warnings = report.findings.len() as u64 - kept_errors;
    assert!(
        report.errors >= kept_errors && report.warnings >= kept_warnings,
        "counts ({} errors, {} warnings) below the kept findings: {:#?}",
        report.errors,
        report.warnings,
        report.findings
    );
    assert!(
        report.findings.len() <= options.max_errors.max(1),
        "{} findings kept, max_errors {}",
        report.findings.len(),
        options.max_errors
    );
    for f in &report.findings {
        assert!(
            f.offset <= data_len as u64,
            "finding offset {} beyond the data ({} bytes): {f:?}",
            f.offset,
            data_len
        );
        assert_eq!(f.severity, f.code.severity(), "{f:?}");
    }
    if report.errors == 0 {
        assert!(
            report.manifest.is_some(),
            "no errors but no manifest: {report:#?}"
        );
        let (content, archive) = report
            .closing_hashes
            .clone()
            .unwrap_or_else(|| panic!("no errors but no closing hashes: {report:#?}"));
        assert_eq!(
            Some(&content),
            report.content_hash.as_ref(),
            "valid, yet contentHash differs"
        );
        assert_eq!(
            Some(&archive),
            report.archive_hash.as_ref(),
            "valid, yet archiveHash differs"
        );
        let receipt = report.receipt().expect("valid, yet no receipt");
        let line = receipt.to_canonical_line();
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(
            ndarc_json::check_canonical(&line[..line.len() - 1]),
            Ok(None),
            "receipt is not canonical JSON"
        );
    } else {
        assert!(report.receipt().is_none(), "invalid, yet a receipt");
    }
}

/// What two reports of the same bytes must share, whichever reader made
/// them and however the threads ran: counts, the kept findings in order
/// (code, line, offset, pointer) and the hashes.
pub fn assert_same(a: &Report, b: &Report, what: &str) {
    let key = |r: &Report| {
        r.findings
            .iter()
            .map(|f| (f.code, f.line, f.offset, f.pointer.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        (a.errors, a.warnings, key(a)),
        (b.errors, b.warnings, key(b)),
        "{what}: reports differ:\n{:#?}\n---\n{:#?}",
        a.findings,
        b.findings
    );
    assert_eq!(a.closing_hashes, b.closing_hashes, "{what}: closing hashes");
    assert_eq!(a.content_hash, b.content_hash, "{what}: contentHash");
    assert_eq!(a.archive_hash, b.archive_hash, "{what}: archiveHash");
}
