//! The importers and format detection (`ctxkit_core::import`).

use ctxkit_core::import::{detect_format, import_transcript, TranscriptFormat};
use ctxkit_core::repair_tool_pairs;

use crate::{assert_valid_for_both, text};

/// Imports the bytes as every format, and as the detected one.
///
/// Invariants: no importer panics; an import that succeeds says it read the format it was
/// asked for; detection and an import without a format agree (the same format, the same
/// sessions as importing with the detected format named); each session's compaction indices
/// point inside its messages; and every imported session, once repaired, is a request both
/// providers accept.
pub fn check_import(data: &[u8]) {
    let text = text(data);
    for format in TranscriptFormat::ALL {
        if let Ok(imported) = import_transcript(&text, Some(format)) {
            assert_eq!(imported.format, format, "import as {}", format.as_str());
            for (index, session) in imported.sessions.iter().enumerate() {
                let what = format!("{} session {index}", format.as_str());
                for &at in &session.compactions {
                    assert!(
                        at <= session.messages.len(),
                        "{what}: compaction index {at} is past its {} messages",
                        session.messages.len()
                    );
                }
                assert_valid_for_both(&repair_tool_pairs(&session.messages), &what);
            }
        }
    }
    let detected = detect_format(&text);
    let undirected = import_transcript(&text, None);
    match (&detected, &undirected) {
        (Ok(format), Ok(imported)) => {
            assert_eq!(imported.format, *format, "detection and import disagree");
            let named = import_transcript(&text, Some(*format));
            assert_eq!(
                named.as_ref().ok(),
                Some(imported),
                "importing as the detected {} differs from importing undirected",
                format.as_str()
            );
        }
        (Err(_), Ok(imported)) => panic!(
            "detection failed but an undirected import read {}",
            imported.format.as_str()
        ),
        _ => {}
    }
}
