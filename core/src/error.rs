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
