//! The replay report: what each turn of `ctxkit replay` did (token bar, compactions, offloads,
//! nudges, warnings) and the totals table, as text or JSON, gathered from the engine's events.

use ctxkit::store::SessionInfo;
use ctxkit::Event;
use ctxkit_core::compaction::SummaryMethod;
use serde_json::json;

use super::report::{percent, table, thousands, token_bar, Style};

/// What one turn did.
#[derive(Debug, Default)]
pub(super) struct TurnReport {
    turn: usize,
    tokens: u64,
    budget: u64,
    messages: usize,
    tier: String,
    compaction: Option<Compaction>,
    requested: Option<(u64, usize)>,
    offloads: Vec<(u64, String, u64)>,
    nudges: Vec<String>,
    warnings: Vec<String>,
    cut: usize,
    /// The turn's whole stats, as `--json` prints them (the Python tests compare them).
    stats: Option<ctxkit_core::compaction::ViewStats>,
}

fn plural<'w>(count: usize, one: &'w str, many: &'w str) -> &'w str {
    if count == 1 {
        one
    } else {
        many
    }
}

#[derive(Debug, Clone)]
struct Compaction {
    method: SummaryMethod,
    through_seq: u64,
    summary_tokens: u64,
    dropped: usize,
}

impl TurnReport {
    /// The report of turn `turn`, before anything happened.
    pub(super) fn new(turn: usize) -> Self {
        TurnReport {
            turn,
            ..TurnReport::default()
        }
    }

    pub(super) fn absorb(&mut self, events: &[Event]) {
        for event in events {
            match event {
                Event::SummaryRequested {
                    covered_tokens,
                    messages,
                    ..
                } => self.requested = Some((*covered_tokens, *messages)),
                Event::Compacted {
                    method,
                    through_seq,
                    summary_tokens,
                    ..
                } => {
                    self.compaction = Some(Compaction {
                        method: *method,
                        through_seq: *through_seq,
                        summary_tokens: *summary_tokens,
                        dropped: 0,
                    });
                }
                Event::Offloaded {
                    seq,
                    relative_path,
                    bytes,
                    ..
                } => self.offloads.push((*seq, relative_path.clone(), *bytes)),
                Event::Warning { message, .. } => self.warnings.push(message.clone()),
                _ => {}
            }
        }
    }

    pub(super) fn view(&mut self, view: &ctxkit::TurnResult) {
        let stats = &view.stats;
        self.stats = Some(stats.clone());
        self.tokens = stats.total_tokens;
        self.budget = stats.budget_tokens;
        self.messages = stats.messages;
        self.cut = stats.cut_messages;
        self.tier = stats
            .tier
            .map(|t| {
                serde_json::to_value(t)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        self.nudges = stats
            .nudges
            .iter()
            .map(|n| {
                serde_json::to_value(n)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            })
            .collect();
        if let Some(compaction) = &mut self.compaction {
            compaction.dropped = stats.dropped_messages;
        }
    }

    /// The view's size before this turn's compaction: what it is now, less the summary, plus
    /// what the summary replaced.
    pub(super) fn before_compaction(&self) -> Option<u64> {
        let compaction = self.compaction.as_ref()?;
        let (covered, _) = self.requested?;
        Some((self.tokens + covered).saturating_sub(compaction.summary_tokens))
    }

    pub(super) fn render(&self, style: Style) -> String {
        let share = percent(self.tokens, self.budget);
        let mut out = format!(
            "turn {:>3} {} {:>7} / {} tokens {:>3}%  {} messages\n",
            self.turn,
            token_bar(style, self.tokens, self.budget, 24),
            thousands(self.tokens),
            thousands(self.budget),
            share,
            self.messages,
        );
        let mark = style.dim("         ↳");
        if let Some(compaction) = &self.compaction {
            let line = match (compaction.method, self.before_compaction(), self.requested) {
                (SummaryMethod::Truncation, _, _) => format!(
                    "compacted (truncation): {} older messages dropped through seq {}, view now {} tokens",
                    compaction.dropped,
                    compaction.through_seq,
                    thousands(self.tokens)
                ),
                (method, Some(before), Some((_, messages))) => format!(
                    "compacted ({}): {messages} {} through seq {} summarized, {} → {} tokens",
                    method.as_str(),
                    plural(messages, "message", "messages"),
                    compaction.through_seq,
                    thousands(before),
                    thousands(self.tokens)
                ),
                (method, _, _) => format!("compacted ({}) through seq {}", method.as_str(), compaction.through_seq),
            };
            out.push_str(&format!("{mark} {}\n", style.bold(&line)));
        }
        if self.cut > 0 {
            out.push_str(&format!(
                "{mark} {}\n",
                style.bold(&format!(
                    "truncated: {} oversized {} cut head + tail to fit",
                    self.cut,
                    plural(self.cut, "message", "messages")
                ))
            ));
        }
        for (seq, path, bytes) in &self.offloads {
            out.push_str(&format!(
                "{mark} offloaded seq {seq} ({} bytes) → {path}\n",
                thousands(*bytes)
            ));
        }
        for nudge in &self.nudges {
            out.push_str(&format!("{mark} nudge: {nudge}\n"));
        }
        for warning in &self.warnings {
            out.push_str(&format!(
                "{mark} {}\n",
                style.yellow(&format!("warning: {warning}"))
            ));
        }
        out
    }

    pub(super) fn to_json(&self) -> serde_json::Value {
        json!({
            "type": "turn",
            "turn": self.turn,
            "tokens": self.tokens,
            "budget": self.budget,
            "percent": percent(self.tokens, self.budget),
            "messages": self.messages,
            "tier": self.tier,
            "compaction": self.compaction.as_ref().map(|c| json!({
                "method": c.method,
                "through_seq": c.through_seq,
                "summary_tokens": c.summary_tokens,
                "tokens_before": self.before_compaction(),
                "tokens_after": self.tokens,
                "dropped_messages": c.dropped,
            })),
            "offloads": self.offloads.iter().map(|(seq, path, bytes)| json!({"seq": seq, "path": path, "bytes": bytes})).collect::<Vec<_>>(),
            "nudges": self.nudges,
            "cut_messages": self.cut,
            "warnings": self.warnings,
            "stats": self.stats,
        })
    }
}

/// What the whole replay did.
#[derive(Debug, Default)]
pub(super) struct Totals {
    turns: usize,
    compactions: Vec<SummaryMethod>,
    offloads: usize,
    offloaded_bytes: u64,
    memory_nudges: usize,
    stall_nudges: usize,
    peak: (u64, u64),
    last: (u64, u64, usize),
    warnings: usize,
}

impl Totals {
    pub(super) fn add(&mut self, turn: &TurnReport) {
        self.turns += 1;
        self.compactions
            .extend(turn.compaction.as_ref().map(|c| c.method));
        self.offloads += turn.offloads.len();
        self.offloaded_bytes += turn.offloads.iter().map(|(_, _, bytes)| bytes).sum::<u64>();
        self.memory_nudges += turn.nudges.iter().filter(|n| *n == "memory").count();
        self.stall_nudges += turn.nudges.iter().filter(|n| *n == "stall").count();
        if turn.tokens >= self.peak.0 {
            self.peak = (turn.tokens, turn.budget);
        }
        self.last = (turn.tokens, turn.budget, turn.messages);
        self.warnings += turn.warnings.len();
    }

    pub(super) fn methods(&self) -> String {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for method in &self.compactions {
            match counts.iter_mut().find(|(name, _)| *name == method.as_str()) {
                Some(entry) => entry.1 += 1,
                None => counts.push((method.as_str(), 1)),
            }
        }
        counts
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(super) fn render(&self, info: &SessionInfo, session: &str) -> String {
        let compactions = if self.compactions.is_empty() {
            "0".to_owned()
        } else {
            format!("{} ({})", self.compactions.len(), self.methods())
        };
        table(&[
            ("turns".into(), self.turns.to_string()),
            (
                "messages logged".into(),
                format!(
                    "{} ({} tokens estimated)",
                    info.messages,
                    thousands(info.total_tokens)
                ),
            ),
            ("compactions".into(), compactions),
            (
                "offloads".into(),
                format!(
                    "{} ({} bytes, under .ctxkit/tool_results/{session}/)",
                    self.offloads,
                    thousands(self.offloaded_bytes)
                ),
            ),
            (
                "nudges".into(),
                format!("memory {}, stall {}", self.memory_nudges, self.stall_nudges),
            ),
            (
                "peak view".into(),
                format!(
                    "{} tokens ({}% of the budget)",
                    thousands(self.peak.0),
                    percent(self.peak.0, self.peak.1)
                ),
            ),
            (
                "final view".into(),
                format!(
                    "{} tokens, {} messages",
                    thousands(self.last.0),
                    self.last.2
                ),
            ),
            ("warnings".into(), self.warnings.to_string()),
        ])
    }

    pub(super) fn to_json(&self, info: &SessionInfo) -> serde_json::Value {
        json!({
            "type": "summary",
            "turns": self.turns,
            "messages_logged": info.messages,
            "log_tokens": info.total_tokens,
            "compactions": self.compactions,
            "offloads": self.offloads,
            "offloaded_bytes": self.offloaded_bytes,
            "nudges": {"memory": self.memory_nudges, "stall": self.stall_nudges},
            "peak_tokens": self.peak.0,
            "final_tokens": self.last.0,
            "final_messages": self.last.2,
            "warnings": self.warnings,
        })
    }
}
