//! `aura cache`: the compilation cache's stats, or clearing it.

use std::process::ExitCode;

use super::Globals;

/// The compilation cache: `stats` (entries, bytes, bound) or `clear` (remove them all).
#[derive(clap::Args, Debug)]
pub struct CacheCommand {
    #[command(subcommand)]
    action: CacheAction,
}

#[derive(clap::Subcommand, Debug, Clone, Copy)]
enum CacheAction {
    /// Print where the cache is, its entries and bytes, and its bound, as JSON.
    Stats,
    /// Remove every entry (the next start compiles again).
    Clear,
}

impl CacheCommand {
    /// Prints what the cache holds, or what was removed.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let dir = globals.cache_dir();
        let cache = aura_plugins::code_cache::CodeCache::open(&dir)?;
        let (verb, stats) = match self.action {
            CacheAction::Stats => ("holds", cache.stats()?),
            CacheAction::Clear => ("removed", cache.clear()?),
        };
        println!("{}", serde_json::json!({ "cache_dir": dir, verb: stats }));
        Ok(ExitCode::SUCCESS)
    }
}
