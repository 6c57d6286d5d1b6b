//! How a command fails: a one-line message and an exit code (1 runtime, 2 bad input or usage),
//! or, when standard output was closed, a quiet stop ([`Failure::closed_output`], exit 0).

use ctxkit::Error;
use ctxkit_core::CoreError;

/// A failed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// 1: the command could not run (I/O, database); 2: the input or the usage is wrong.
    pub code: u8,
    /// What went wrong, naming the file, line and field.
    pub message: String,
}

impl Failure {
    /// Bad input or usage (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    /// A runtime failure (exit code 1).
    pub fn runtime(message: impl Into<String>) -> Self {
        Failure {
            code: 1,
            message: message.into(),
        }
    }

    /// Standard output was closed (`ctxkit sessions | head -n1`): the command stops where it
    /// is, and `main` exits 0 without a message, as every Unix tool does when its reader is
    /// gone. Code 0 marks it.
    pub fn closed_output() -> Self {
        Failure {
            code: 0,
            message: String::new(),
        }
    }

    /// Whether this is [`Failure::closed_output`].
    pub fn is_closed_output(&self) -> bool {
        self.code == 0
    }

    /// The same failure, with `place` (a file name) in front.
    pub fn within(self, place: &str) -> Self {
        Failure {
            message: format!("{place}: {}", self.message),
            ..self
        }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        // What the user gave is wrong: fix the input. Anything else: the machine failed.
        let bad_input = matches!(
            error,
            Error::Core { .. }
                | Error::InvalidInput { .. }
                | Error::NoSuchSession(_)
                | Error::SessionExists(_)
                | Error::NoSuchMemory(_)
        );
        let message = error.to_string();
        if bad_input {
            Failure::usage(message)
        } else {
            Failure::runtime(message)
        }
    }
}

impl From<CoreError> for Failure {
    fn from(error: CoreError) -> Self {
        Failure::usage(error.to_string())
    }
}
