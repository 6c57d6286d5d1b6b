//! Every repaired view passes both providers' validators once converted to their wire format
//! (an invariant of docs/architecture.md: "every view passes both providers' validators, for any log").

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
    }
}
