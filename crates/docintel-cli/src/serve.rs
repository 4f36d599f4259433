//! `docintel serve`: the knowledge bases over HTTP (the `docintel-serve`
//! crate does the work); this file reads the arguments and starts it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use docintel::{AskOptions, Config, LlmFlags};
use docintel_serve::{AppState, Limits, TenantKb};

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// A knowledge base folder, one per tenant (repeat for several tenants);
    /// each needs an API key (`docintel kb key add KB`).
    #[arg(long = "kb", value_name = "KB", required = true)]
    kbs: Vec<PathBuf>,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// The largest upload, MiB.
    #[arg(long, value_name = "MIB", default_value_t = 32)]
    max_upload_mib: usize,
    /// Pipeline jobs (ask, upload, page render) at once; one more is answered 429.
    #[arg(long, value_name = "N", default_value_t = 4)]
    max_concurrent: usize,
    /// Seconds a request may take before it is answered 504.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    timeout: u64,
    /// Retrieval: number of passages shown to the generator.
    #[arg(long, default_value_t = 5)]
    top_k: usize,
    /// Answer offline with the extractive generator even when an endpoint is configured.
    #[arg(long)]
    offline: bool,
    /// Write each answer's audit trail under KB/traces/ and serve it at GET /v1/traces/{id}.
    #[arg(long)]
    traces: bool,
    /// A tenant key file (`docintel kb key new`; repeat for several): each encrypted
    /// knowledge base is opened with the one its manifest accepts (default:
    /// $DOCINTEL_KB_KEY_FILE).
    #[arg(long = "key-file", value_name = "FILE")]
    key_files: Vec<PathBuf>,
}

pub(crate) fn run(args: ServeArgs) -> anyhow::Result<()> {
    // The `--key-file`s, else `kb`'s default key (DOCINTEL_KB_KEY_FILE). A key file that
    // cannot be read, or no key for an encrypted knowledge base, is bad input (exit 3, as
    // for `kb ask`).
    let keys: Vec<docintel_kb::KbKey> = if args.key_files.is_empty() {
        crate::kb::key(None)?.into_iter().collect()
    } else {
        args.key_files.iter().map(|path| docintel_kb::KbKey::from_file(path)).collect::<Result<_, _>>()?
    };
    let mut tenants = Vec::new();
    for kb in &args.kbs {
        let kb = std::path::absolute(kb).with_context(|| kb.display().to_string())?;
        if tenants.iter().any(|t: &TenantKb| t.kb == kb) {
            bail!("{}: given twice", kb.display());
        }
        // An encrypted knowledge base needs the key that opens it: none fitting is said now,
        // not at the first question.
        // (The error names the KB and says how to give the key.)
        let key = docintel_kb::key_for(&kb, &keys)?;
        let tenant = TenantKb::load(kb)?.with_key(key);
        if tenant.key_hashes.is_empty() {
            bail!("{}: no API key; make one with `docintel kb key add {}`", tenant.kb.display(), tenant.kb.display());
        }
        tenants.push(tenant);
    }
    let config = Config::from_env();
    let mut options = AskOptions::new(args.top_k);
    options.generator = config.generator(LlmFlags { base_url: None, model: None, offline: args.offline })?;
    options.out_dir = None;
    let limits = Limits {
        max_upload_bytes: args.max_upload_mib.saturating_mul(1 << 20),
        max_concurrent: args.max_concurrent.max(1),
        request_timeout: Duration::from_secs(args.timeout.max(1)),
    };
    let n = tenants.len();
    let mut state = AppState::new(tenants, options, limits)?;
    state.traces = args.traces;
    let server = docintel_serve::start(args.addr, state)?;
    eprintln!("docintel serve: http://{} ({n} tenant(s); Ctrl-C stops)", server.addr());
    server.wait()?;
    Ok(())
}
