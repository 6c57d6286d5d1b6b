//! [`EngineConfig`]: everything the engine is told once, at open. `Default` is offline: the
//! extractive summarizer, offloading on with the core's default policy, memory in the prompt.

use ctxkit_core::compaction::Budget;
use ctxkit_core::compaction::Policy;
use ctxkit_core::memory::PrecisOptions;
use ctxkit_core::offload::OffloadPolicy;
use ctxkit_core::prompt::Skill;

use crate::llm::SummarizerConfig;

/// How the engine works; see each field.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    /// The token budget of a view.
    pub budget: Budget,
    /// Planning policy (compaction strategy, nudges...). Its `family` is the one new sessions
    /// get; an existing session keeps the family its estimates were cached for.
    pub policy: Policy,
    /// The parts of the system prompt the engine does not read itself.
    pub prompt: PromptConfig,
    /// Offload big tool outputs to files; `None` turns offloading off.
    pub offload: Option<OffloadPolicy>,
    /// Who answers summary requests.
    pub summarizer: SummarizerConfig,
    /// Long-term memory.
    pub memory: MemoryOptions,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            budget: Budget::default(),
            policy: Policy::default(),
            prompt: PromptConfig::default(),
            offload: Some(OffloadPolicy::default()),
            summarizer: SummarizerConfig::default(),
            memory: MemoryOptions::default(),
        }
    }
}

/// The system prompt's fixed parts. The engine adds the working directory, the date, AGENTS.md,
/// offload guidance and the memory precis itself, every turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptConfig {
    /// The role text; `None` uses the core's default.
    pub base: Option<String>,
    /// The skills the agent can use.
    pub skills: Vec<Skill>,
    /// Add the core's todo guidance (for agents with a todo tool). Default false.
    pub todo_guidance: bool,
    /// Read `<workdir>/AGENTS.md` every turn. Default true.
    pub read_agents_md: bool,
    /// AGENTS.md is cut to this many bytes. Default 16,384.
    pub agents_md_max_bytes: usize,
    /// The working directory as the prompt shows it; `None` shows the real path.
    pub working_directory: Option<String>,
    /// Once the session has a checkpoint, add the core's guidance on the history tools
    /// ([`crate::Engine::history_tools`], executed by [`crate::Engine::execute_tool`]).
    /// Default true: turn it off for an agent that does not offer them.
    pub history_guidance: bool,
}

impl Default for PromptConfig {
    fn default() -> Self {
        PromptConfig {
            base: None,
            skills: Vec::new(),
            todo_guidance: false,
            read_agents_md: true,
            agents_md_max_bytes: 16_384,
            working_directory: None,
            history_guidance: true,
        }
    }
}

/// Long-term memory settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryOptions {
    /// Size of the precis (prompt section and MEMORY.md).
    pub precis: PrecisOptions,
    /// Put the precis in the system prompt. Default true.
    pub in_prompt: bool,
    /// With an LLM summarizer, extract memories before each compaction. Default true.
    pub extract_before_compaction: bool,
    /// Rewrite `<workdir>/.ctxkit/MEMORY.md` after every memory write. Default true.
    pub write_memory_file: bool,
}

impl Default for MemoryOptions {
    fn default() -> Self {
        MemoryOptions {
            precis: PrecisOptions::default(),
            in_prompt: true,
            extract_before_compaction: true,
            write_memory_file: true,
        }
    }
}
