//! Offload planning (`ctxkit_core::offload::plan_offload`): where a big tool output goes.

use ctxkit_core::offload::session_folder;
use ctxkit_core::{plan_offload, Message, OffloadPolicy};

/// Splits the bytes at NULs into a session name, a folder, a tool call id and the output,
/// plans its offload with a small threshold, and checks the plan.
///
/// Invariants: the file goes inside the policy's folder, under the session's folder: its
/// relative path is `<session folder>/<file name>`, the file name has no `/`, `\`, NUL or
/// control character and is not `.` or `..`, and no component of the path is empty, `.` or
/// `..`; the plan keeps the whole output (`content`, `bytes`); its head and tail are pieces of
/// the output that do not overlap.
pub fn check_offload(data: &[u8]) {
    let mut parts = data.splitn(4, |&byte| byte == 0).map(crate::text);
    let session = parts.next().unwrap_or_default();
    let folder = parts.next().unwrap_or_default();
    let call_id = parts.next().unwrap_or_default();
    let output = parts.next().unwrap_or_default();
    let policy = OffloadPolicy {
        threshold_bytes: 16,
        head_max_lines: 3,
        head_max_bytes: 40,
        tail_max_lines: 2,
        tail_max_bytes: 30,
        folder: folder.clone(),
        ..OffloadPolicy::default()
    };
    let result = Message::tool_result(call_id, output.clone(), false);
    let Ok(Some(plan)) = plan_offload(7, &session, &result, Some("bash"), &policy) else {
        return;
    };
    let Ok(session_folder) = session_folder(&session, &folder) else {
        panic!("plan_offload planned a file for a session folder session_folder refuses");
    };
    let folder = folder.trim_end_matches('/');
    assert!(
        session_folder.starts_with(&format!("{folder}/")),
        "the session folder {session_folder:?} is not inside {folder:?}"
    );
    assert_eq!(
        plan.relative_path,
        format!("{session_folder}/{}", plan.file_name),
        "the path is not the session folder and the file name"
    );
    let name = &plan.file_name;
    assert!(
        !name.is_empty()
            && name != "."
            && name != ".."
            && !name.contains(['/', '\\'])
            && !name.chars().any(char::is_control),
        "bad file name {name:?}"
    );
    for component in plan.relative_path.split('/') {
        assert!(
            !matches!(component, "" | "." | ".."),
            "the path {:?} has a {component:?} component",
            plan.relative_path
        );
        assert!(
            !component.chars().any(char::is_control),
            "a control character in {:?}",
            plan.relative_path
        );
    }
    assert!(!plan.relative_path.starts_with('/'), "an absolute path");
    assert_eq!(
        plan.content, output,
        "the offload does not keep the whole output"
    );
    assert_eq!(plan.bytes, output.len());
    assert!(
        output.starts_with(&plan.head),
        "the head is not the start of the output"
    );
    assert!(
        output.ends_with(&plan.tail),
        "the tail is not the end of the output"
    );
    assert!(
        plan.head.len() + plan.tail.len() <= output.len(),
        "the head and tail overlap"
    );
}
