//! Every repaired view passes every provider's validator once converted to its wire format
//! (OpenAI Chat Completions, Anthropic, OpenAI Responses, Gemini: an invariant of
//! docs/architecture.md, "every view passes every provider's validator, for any log"), and
//! renders in the AI SDK and LangChain shapes in a form their readers take back.

use ctxkit_core::wire::{from_format, render_messages, validate, WireFormat};
use ctxkit_core::{
    repair_tool_pairs, to_anthropic, to_openai, validate_anthropic, validate_openai, Role,
};
use ctxkit_tests::arbitrary::arb_log;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn repaired_views_pass_both_validators(log in arb_log()) {
        let view = repair_tool_pairs(&log);
        // An empty conversation is no request at all: repair never invents one.
        if !view.iter().any(|m| m.role != Role::System) {
            return Ok(());
        }
        let openai = to_openai(&view);
        let violations = validate_openai(&openai);
        prop_assert!(violations.is_empty(), "OpenAI: {violations:?}\n{openai:#}");
        {
            let anthropic = to_anthropic(&view).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let violations = validate_anthropic(&anthropic);
            prop_assert!(violations.is_empty(), "Anthropic: {violations:?}\n{anthropic:#}");
        }
        for format in [WireFormat::Responses, WireFormat::Gemini, WireFormat::AiSdk, WireFormat::LangChain] {
            let rendered = render_messages(&view, format).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if let Some(violations) = validate(&rendered, format) {
                prop_assert!(violations.is_empty(), "{}: {violations:?}\n{rendered:#}", format.as_str());
            }
            let read = from_format(&rendered, format).map_err(|e| TestCaseError::fail(format!("{}: {e}\n{rendered:#}", format.as_str())))?;
            let calls = |messages: &[ctxkit_core::Message]| messages.iter().map(|m| m.tool_calls.len()).sum::<usize>();
            prop_assert_eq!(calls(&read), calls(&view), "{}: tool calls kept", format.as_str());
        }
    }
}
