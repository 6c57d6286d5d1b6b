//! The one error type of the core.
//!
//! Every public function that can reject its input returns [`CoreError`]; none panics. Each
//! error names what is wrong and where (`messages[3].tool_calls[0].id: missing`), so a shell
//! can show it to a person as it is.

/// Why a core function refused its input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    /// The input does not have the expected shape.
    #[error("{at}: {problem}")]
    InvalidInput {
        /// Where the problem is, as a path into the input (`messages[3].content[1].type`).
        at: String,
        /// What is wrong, in words.
        problem: String,
    },
    /// The budget cannot hold the system prompt and the smallest conversation (the last user
    /// message, cut as far as it can be): any view sent would be rejected or empty.
    #[error("budget too small: a window of {window} tokens leaves {usable} usable tokens, of which a view may fill {allowed}, but the system prompt needs {system_tokens} and the last user message {last_user_tokens} (at least {needed} together, with the message cut to its smallest); use a bigger window or a shorter system prompt")]
    BudgetTooSmall {
        /// The model's context window.
        window: u64,
        /// What the budget leaves for a view (window minus the reserves).
        usable: u64,
        /// What a compacted view may fill (the trigger).
        allowed: u64,
        /// What the system prompt needs.
        system_tokens: u64,
        /// What the last user message of the log needs as it is (0 when there is none).
        last_user_tokens: u64,
        /// The least a view needs: the system prompt and the last user message cut to its
        /// smallest.
        needed: u64,
    },
    /// The reserves of a budget (output, tool schemas, safety margin) leave nothing of the window
    /// for a view: every view would be empty.
    #[error("budget too small: budget.context_window is {window} tokens, but budget.output_reserve ({output_reserve}) + budget.tool_schema_tokens ({tool_schema_tokens}) + budget.safety_margin ({safety_margin}) = {reserved} leave no room for a view; set a smaller output_reserve or a bigger context_window (leaving out output_reserve and safety_margin scales them to the window)")]
    ReservesFillWindow {
        /// The model's context window.
        window: u64,
        /// Kept for the answer.
        output_reserve: u64,
        /// Tool definitions.
        tool_schema_tokens: u64,
        /// Slack for estimation error.
        safety_margin: u64,
        /// The three together.
        reserved: u64,
    },
}

impl CoreError {
    /// An [`CoreError::InvalidInput`] at `at`.
    pub fn invalid(at: impl Into<String>, problem: impl Into<String>) -> Self {
        CoreError::InvalidInput {
            at: at.into(),
            problem: problem.into(),
        }
    }
}

/// Shorthand for results of the core.
pub type Result<T, E = CoreError> = std::result::Result<T, E>;
