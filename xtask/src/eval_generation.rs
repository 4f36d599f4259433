//! `cargo xtask eval generation [--record] [--shared DIR] [--context line|paragraph|page] [--token-budget N] [--context-window N] [--verbose]`:
//! what the LLM generator's dispatch costs and whether its citations hold,
//! on a fixed question set over the project's invoices and NIST CSF excerpt
//! (`fixtures/eval/generation/questions.json`), or with `--shared DIR` on
//! the 25 single-fact (title lookup) questions of the NIST SP 800-53 rendered
//! QA (`DIR/core/nist_sp800-53r5_rendered_qa.json`, a 400-page catalogue).
//!
//! The shared set is where top-1-first is meant to pay: a long document,
//! five candidates retrieved, one of them enough. It runs the oracle live
//! (it is code, so nothing is recorded): evidence is the control's heading
//! line, `<control id> <gold title>`.
//!
//! Every question is parsed, retrieved (top 5, window 2, then expanded to the
//! answer context the question parser chose, or to `--context`) and answered twice
//! through [`LlmGenerator`]: combined (one call with every passage) and
//! sequential (top-1 first, stop when sufficient). Listing questions run
//! combined only. The model is a [`ReplayTransport`] over recorded
//! chat-completion responses in `fixtures/eval/generation/replay/` (with
//! `--context X`: `replay-X/`; the passages differ, so do the requests).
//!
//! Recorded replies (`--record` rewrites them) come from a scripted oracle,
//! not a model: for each request it reads the passage rows actually shown
//! and answers with the gold value only when the gold evidence lines are
//! among them (citing their GLOBAL_LINE ids and quoting them), else an
//! honest not-found naming the passages it saw. So every reply is one a
//! model could give from those passages. Usage is never invented: prompt
//! tokens are counted on the request text with the cl100k_base BPE
//! (tiktoken-rs) plus OpenAI's chat overhead (3 per message + 3), completion
//! tokens on the reply text; a replay run recounts every request and fails
//! if a recording disagrees.
//!
//! Two references are measured next to them: "naive top-5 combined", one
//! combined call over the same retrieval with the relevance floor off
//! (`KeywordRetriever::with_floor(0.0)`: up to five passages, whatever their
//! score; the retriever still holds back passages matched only by keywords
//! on most lines); and "naive chunk top-5 combined", the usual RAG call:
//! the document cut into ~512-token chunks (the parse brick's
//! `chunk_document`, 64 tokens of overlap), the five best by BM25 for the
//! question's tokens, one combined call. Their replies are recorded with
//! the others.
//!
//! Printed: input tokens per question combined vs sequential (and naive
//! top-5 combined), the share saved on single-fact questions against each
//! combined call and by the floor alone, the fixed per-call overhead (system
//! prompt and user header without passages), the share of answers whose
//! citations all verified, and the exits that fired.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use docintel::schema::{
    AnswerContext, ChunkStrategy, Generator, LanguageModel, LlmRequest, LlmResponse, NullSink, ParsedDocument,
    ParsedQuestion, Passage, QuestionParser, Retriever, registry, text,
};
use docintel::{AskOptions, ChunkConfig, KeywordRetriever, RetrieveConfig, chunk_document, parse_pdf, question_parser};
use docintel_generate::{DispatchOptions, LlmGenerator, verify_citations};
use docintel_llm::ReplayTransport;
use serde_json::{Value, json};
use tiktoken_rs::CoreBPE;

/// The model name sent in every request (the replay key includes it).
const MODEL: &str = "scripted-oracle";

struct Gold {
    /// Alternatives, each a run of consecutive lines (substrings, in order).
    evidence: Vec<Vec<String>>,
    value: Value,
    text: String,
}

struct Case {
    id: String,
    document: String,
    question: String,
    listing: bool,
    answers: Vec<Gold>,
}

fn load_cases(path: &Path) -> anyhow::Result<Vec<Case>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let str_of = |v: &Value, key: &str| -> anyhow::Result<String> {
        v.get(key).and_then(Value::as_str).map(str::to_owned).with_context(|| format!("a case lacks {key:?}"))
    };
    let mut cases = Vec::new();
    for case in value.as_array().context("questions.json must be an array")? {
        let mut answers = Vec::new();
        for gold in case.get("answers").and_then(Value::as_array).context("a case lacks \"answers\"")? {
            let evidence = gold
                .get("evidence")
                .and_then(Value::as_array)
                .context("an answer lacks \"evidence\"")?
                .iter()
                .map(|alt| {
                    alt.as_array()
                        .map(|lines| lines.iter().filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>())
                        .filter(|lines| !lines.is_empty())
                        .context("evidence alternatives are non-empty arrays of strings")
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            answers.push(Gold {
                evidence,
                value: gold.get("value").cloned().unwrap_or(Value::Null),
                text: str_of(gold, "text")?,
            });
        }
        cases.push(Case {
            id: str_of(case, "id")?,
            document: str_of(case, "document")?,
            question: str_of(case, "question")?,
            listing: str_of(case, "kind")? == "listing",
            answers,
        });
    }
    Ok(cases)
}

/// The single-fact questions of the NIST SP 800-53 rendered QA: each
/// `lookup` item asks a control's title; its evidence is the heading line.
fn nist_cases(shared: &Path) -> anyhow::Result<(PathBuf, Vec<Case>)> {
    let gold_path = shared.join("core/nist_sp800-53r5_rendered_qa.json");
    let text = std::fs::read_to_string(&gold_path).with_context(|| format!("reading {}", gold_path.display()))?;
    let gold: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", gold_path.display()))?;
    let mut cases = Vec::new();
    for item in gold["items"].as_array().context("NIST QA: no items")? {
        if item["kind"] != "lookup" {
            continue;
        }
        let field =
            |key: &str| item[key].as_str().map(str::to_owned).with_context(|| format!("NIST QA item lacks {key}"));
        let (id, title) = (field("control_id")?, field("answer")?);
        cases.push(Case {
            id: format!("nist_{id}"),
            document: String::new(),
            question: field("question")?,
            listing: false,
            answers: vec![Gold {
                evidence: vec![vec![format!("{id} {title}")]],
                value: Value::String(title.clone()),
                text: title,
            }],
        });
    }
    Ok((shared.join("core/nist_sp800-53r5_catalog_rendered.pdf"), cases))
}

/// Prompt tokens of a chat request: cl100k_base tokens of every message
/// plus OpenAI's chat framing (3 per message, 3 to prime the reply).
fn prompt_tokens(bpe: &CoreBPE, request: &LlmRequest) -> u64 {
    let framing = 3 * request.messages.len() as u64 + 3;
    framing
        + request
            .messages
            .iter()
            .map(|m| (bpe.encode_ordinary(&m.role).len() + bpe.encode_ordinary(&m.content).len()) as u64)
            .sum::<u64>()
}

/// One passage row of the user prompt.
struct Row {
    line_id: u32,
    page: u32,
    text: String,
}

fn rows_of(user: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in user.lines() {
        if line == docintel_generate::prompt::PASSAGE_HEADER {
            in_table = true;
            continue;
        }
        if !in_table || line.starts_with('#') {
            continue;
        }
        let mut cols = line.splitn(4, '\t');
        let (Some(id), Some(page), Some(_), Some(text)) = (cols.next(), cols.next(), cols.next(), cols.next()) else {
            continue;
        };
        if let (Ok(line_id), Ok(page)) = (id.parse(), page.parse()) {
            rows.push(Row { line_id, page, text: text.to_owned() });
        }
    }
    rows
}

/// The scripted oracle: answers from the rows shown, never from elsewhere.
struct Oracle<'a> {
    cases: &'a [Case],
    bpe: &'a CoreBPE,
}

impl Oracle<'_> {
    fn reply(&self, request: &LlmRequest) -> anyhow::Result<LlmResponse> {
        let user = request.messages.iter().find(|m| m.role == "user").context("request has no user message")?;
        let question = user.content.lines().next().and_then(|l| l.strip_prefix("QUESTION: ")).unwrap_or_default();
        let case =
            self.cases.iter().find(|c| c.question == question).with_context(|| format!("no case for {question:?}"))?;
        let rows = rows_of(&user.content);
        let contains = |row: &Row, needle: &str| text::squash(&row.text).contains(&text::squash(needle));
        let mut items = Vec::new();
        let mut missing = Vec::new();
        for gold in &case.answers {
            let found = gold.evidence.iter().find_map(|alt| {
                (0..rows.len()).find_map(|i| {
                    let run = rows.get(i..i + alt.len())?;
                    let consecutive = run.windows(2).all(|w| w[1].line_id == w[0].line_id + 1);
                    (consecutive && run.iter().zip(alt).all(|(row, needle)| contains(row, needle.as_str())))
                        .then_some(run)
                })
            });
            match found {
                Some(run) => {
                    let quote = run.iter().map(|r| r.text.trim()).collect::<Vec<_>>().join(" ");
                    items.push(json!({
                        "value": gold.value,
                        "text": gold.text,
                        "spans": [{"line_start": run[0].line_id, "line_end": run[run.len() - 1].line_id, "page": run[0].page, "quote": quote}],
                    }));
                }
                None => missing.push(gold.text.clone()),
            }
        }
        let schema = request.schema_name.as_str();
        for item in &items {
            let value = &item["value"];
            let fits = match schema.rsplit('_').next() {
                Some("amount") => value.get("value").is_some(),
                Some("date") => value.get("iso").is_some(),
                Some("text") => value.is_string(),
                _ => false,
            };
            if !fits {
                bail!(
                    "case {}: the question parser chose schema {schema}, which the gold value {value} does not fit",
                    case.id
                );
            }
        }
        let keywords_line = user.content.lines().find_map(|l| l.strip_prefix("KEYWORDS: ")).unwrap_or_default();
        let keywords_found: Vec<&str> =
            keywords_line.split(", ").filter(|k: &&str| !k.is_empty() && rows.iter().any(|r| contains(r, k))).collect();
        let shown = match (rows.first(), rows.last()) {
            (Some(first), Some(last)) => format!("lines {}-{}", first.line_id, last.line_id),
            _ => "no lines".to_owned(),
        };
        let found = !items.is_empty();
        let complete = found && missing.is_empty();
        let warnings: Vec<String> = if case.answers.is_empty() {
            vec![format!("the passages ({shown}) do not say anything about: {question}")]
        } else if !found {
            vec![format!("the passages shown ({shown}) do not contain the answer")]
        } else if !complete {
            vec![format!("not in the passages shown: {}", missing.join(", "))]
        } else {
            Vec::new()
        };
        let content = json!({
            "items": items,
            "answer_found": found,
            "complete_answer_found": complete,
            "confidence": if complete { 0.9 } else if found { 0.6 } else { 0.0 },
            "warnings": warnings,
            "keywords_found": keywords_found,
            "llm_discovered_keywords": [],
            "conflicting_evidence": false,
            "context_structured": true,
            "suggested_clarification": null,
        })
        .to_string();
        let key = docintel_llm::request_key(request);
        let (input, output) = (prompt_tokens(self.bpe, request), self.bpe.encode_ordinary(&content).len() as u64);
        let raw = json!({
            "id": format!("chatcmpl-{}", &key[..16]),
            "object": "chat.completion",
            "created": 1_764_374_400,
            "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": input,
                "completion_tokens": output,
                "total_tokens": input + output,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        });
        docintel_llm::openai::response_from_raw(raw).map_err(|e| anyhow::anyhow!("{e}"))
    }
}

#[derive(Debug)]
struct ModelError(String);
impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ModelError {}

/// Replays recordings (checking their usage against the request text), or
/// records the oracle's replies first; without a replay directory
/// (`--shared`) the oracle answers live.
struct EvalModel<'a> {
    replay: Option<ReplayTransport>,
    oracle: Option<Oracle<'a>>,
    bpe: &'a CoreBPE,
    recorded: RefCell<u32>,
}

impl LanguageModel for &EvalModel<'_> {
    type Error = ModelError;
    fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, ModelError> {
        let Some(replay) = &self.replay else {
            let oracle = self.oracle.as_ref().ok_or_else(|| ModelError("no oracle and no recordings".into()))?;
            return oracle.reply(request).map_err(|e| ModelError(format!("{e:#}")));
        };
        if let Some(oracle) = &self.oracle {
            let response = oracle.reply(request).map_err(|e| ModelError(format!("{e:#}")))?;
            replay.record(request, &response).map_err(|e| ModelError(e.to_string()))?;
            *self.recorded.borrow_mut() += 1;
        }
        let response = replay.complete(request).map_err(|e| {
            ModelError(format!("{e} (prompts changed? re-record with `cargo xtask eval generation --record`)"))
        })?;
        let counted = prompt_tokens(self.bpe, request);
        if response.usage.input_tokens != counted {
            return Err(ModelError(format!(
                "recording {} claims {} prompt tokens but the request text counts {counted}",
                response.id, response.usage.input_tokens
            )));
        }
        Ok(response)
    }
}

struct Run {
    calls: u32,
    input: u64,
    exit: String,
    strategy: String,
    found: bool,
    verified: bool,
}

/// Runs generations through the eval model with the dispatch options.
struct Dispatch<'m, 'a> {
    model: &'m EvalModel<'a>,
    options: DispatchOptions,
    verbose: bool,
}

impl Dispatch<'_, '_> {
    /// One generation of `question` (its chunk strategy set) over
    /// `passages`; with `--verbose`, its calls, notes and citation problems
    /// under `label`.
    fn run(
        &self,
        label: &str,
        question: &ParsedQuestion,
        document: &ParsedDocument,
        passages: &[Passage],
    ) -> anyhow::Result<Run> {
        let generation = LlmGenerator::new(self.model, MODEL)
            .with_options(self.options.clone())
            .generate(question, document, passages, &mut NullSink)
            .with_context(|| label.to_owned())?;
        let problems = verify_citations(&generation.answer, document, &generation.passages_shown);
        if self.verbose {
            for call in &generation.calls {
                println!(
                    "  {label} call {}: {} passage(s), {} input tokens (estimate {}), found {}",
                    call.call, call.passages, call.usage.input_tokens, call.estimated_input_tokens, call.answer_found
                );
            }
            for note in &generation.notes {
                println!("  {label} note: {note}");
            }
            for problem in &problems {
                println!("  {label} citation problem: {}", problem.problem);
            }
        }
        Ok(Run {
            calls: generation.iterations,
            input: generation.usage.input_tokens,
            exit: generation.exit,
            strategy: generation.strategy_executed,
            found: generation.answer.feedback.answer_found,
            verified: problems.is_empty(),
        })
    }

    /// Input tokens every call over `question` pays whatever its passages:
    /// the system prompt and the user prompt up to the passage table's
    /// header row (question, keywords, table instructions), with the chat
    /// framing.
    fn overhead(&self, bpe: &CoreBPE, question: &ParsedQuestion, document: &ParsedDocument) -> anyhow::Result<u64> {
        let entry = registry::lookup(question.answer_shape, &question.answer_type)
            .with_context(|| format!("no schema for {:?} {}", question.answer_shape, question.answer_type))?;
        let (mut request, _) = LlmGenerator::new(self.model, MODEL).request(question, entry, document, &[]);
        let user = request.messages.iter_mut().find(|m| m.role == "user").context("request has no user message")?;
        let header = docintel_generate::prompt::PASSAGE_HEADER;
        let cut = user.content.find(header).context("user prompt has no passage table")? + header.len() + 1;
        user.content.truncate(cut);
        Ok(prompt_tokens(bpe, &request))
    }
}

/// The chunks of the usual RAG baseline: token-sized chunks of the parse
/// brick (about 512 tokens, 64 repeated), as the frameworks' defaults cut a
/// document.
const BASELINE_CHUNKS: ChunkConfig = ChunkConfig { max_tokens: 512, overlap_tokens: 64 };

/// Chunks shown by the usual RAG baseline.
const BASELINE_TOP_K: usize = 5;

/// A document cut as the usual RAG call cuts it, with the chunks' BM25
/// index: built once per document, asked once per question.
struct ChunkBaseline {
    chunks: Vec<docintel::schema::Chunk>,
    index: docintel_retrieve::bm25::Bm25,
}

impl ChunkBaseline {
    fn new(document: &ParsedDocument) -> ChunkBaseline {
        let chunks = chunk_document(document, &BASELINE_CHUNKS);
        let index = docintel_retrieve::bm25::Bm25::new(chunks.iter().map(|c| crate::bm25::tokens(&c.text)));
        ChunkBaseline { chunks, index }
    }

    /// The usual RAG call's passages: the `BASELINE_TOP_K` chunks ranking
    /// best by flat BM25 for the question's tokens, in rank order, each as a
    /// passage over its lines.
    fn passages(&self, question: &str) -> Vec<Passage> {
        crate::bm25::top(&self.index, question, BASELINE_TOP_K)
            .into_iter()
            .map(|(i, score)| {
                let chunk = &self.chunks[i];
                Passage {
                    line_start: chunk.line_start,
                    line_end: chunk.line_end,
                    page: chunk.page_start,
                    score,
                    anchor_line: chunk.line_start,
                    matched_keywords: Vec::new(),
                    pinned: false,
                }
            })
            .collect()
    }
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut record = false;
    let mut verbose = false;
    let mut shared: Option<PathBuf> = None;
    let mut context: Option<AnswerContext> = None;
    let mut options = DispatchOptions::default();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut number = || -> anyhow::Result<u64> {
            iter.next()
                .with_context(|| format!("{arg} needs a value"))?
                .parse()
                .with_context(|| format!("{arg} takes a number"))
        };
        match arg.as_str() {
            "--record" => record = true,
            "--shared" => shared = Some(PathBuf::from(iter.next().context("--shared needs a directory")?)),
            "--verbose" => verbose = true,
            "--context" => {
                context = Some(match iter.next().map(String::as_str) {
                    Some("line") => AnswerContext::Line,
                    Some("paragraph") => AnswerContext::Paragraph,
                    Some("page") => AnswerContext::Page,
                    other => bail!("--context takes line, paragraph or page (got {other:?})"),
                })
            }
            "--token-budget" => options.token_budget = Some(number()?),
            "--context-window" => options.context_window = Some(number()?),
            other => bail!("unknown eval generation argument {other}"),
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("xtask has a parent")?.to_owned();
    let dir = root.join("fixtures/eval/generation");
    if record && shared.is_some() {
        bail!("--record writes the project's recordings; the --shared set runs the oracle live");
    }
    let (shared_pdf, cases) = match &shared {
        Some(shared) => {
            let (pdf, cases) = nist_cases(shared)?;
            (Some(pdf), cases)
        }
        None => (None, load_cases(&dir.join("questions.json"))?),
    };
    let bpe = tiktoken_rs::cl100k_base().map_err(|e| anyhow::anyhow!("cl100k_base: {e}"))?;
    let replay_dir: PathBuf = match context {
        None => dir.join("replay"),
        Some(c) => dir.join(format!("replay-{}", serde_json::to_value(c)?.as_str().unwrap_or("context"))),
    };
    let live = shared.is_some();
    if record && replay_dir.exists() {
        std::fs::remove_dir_all(&replay_dir).with_context(|| format!("clearing {}", replay_dir.display()))?;
    }
    let model = EvalModel {
        replay: (!live).then(|| ReplayTransport::new(&replay_dir)),
        oracle: (record || live).then_some(Oracle { cases: &cases, bpe: &bpe }),
        bpe: &bpe,
        recorded: RefCell::new(0),
    };
    let parser = question_parser(&AskOptions::new(5)).map_err(|e| anyhow::anyhow!("{e}"))?;
    let retriever = KeywordRetriever::new(RetrieveConfig { top_k: 5, window: 2, reserve: 10, read_pages_whole: false });
    // The reference: the same retrieval with the relevance floor off.
    let naive = retriever.clone().with_floor(0.0);
    let dispatch = Dispatch { model: &model, options, verbose };
    let mut documents: BTreeMap<String, (ParsedDocument, ChunkBaseline)> = BTreeMap::new();

    println!(
        "eval generation: {} questions{}, model {MODEL} ({}), tokenizer cl100k_base, answer context {}",
        cases.len(),
        shared_pdf.as_ref().map(|p| format!(" on {}", p.display())).unwrap_or_default(),
        if live { "live" } else { "replayed" },
        context.map(|c| format!("{c:?} (forced)")).unwrap_or_else(|| "from the question parser".to_owned())
    );
    println!(
        "{:<18} {:<7} {:>4} {:>9} {:>9} {:>6} {:>5} {:<12} {:<12} {:>8} {:>9} {:>9} {:>8} {:>9}",
        "question",
        "shape",
        "pass",
        "comb_in",
        "seq_in",
        "saved",
        "calls",
        "seq_exit",
        "comb_exit",
        "verified",
        "top5_pass",
        "top5_in",
        "overhead",
        "chunk5_in"
    );
    let (mut sum_comb, mut sum_seq, mut sum_comb_found, mut sum_seq_found) = (0u64, 0u64, 0u64, 0u64);
    let (mut sum_top5_found, mut sum_overhead_found, mut sum_seq_calls_found, mut n_found) = (0u64, 0u64, 0u64, 0u64);
    let mut n_called = 0u64;
    let (mut top5_answers, mut top5_verified, mut seq_answers_found) = (0u32, 0u32, 0u32);
    let (mut answers, mut verified_answers) = (0u32, 0u32);
    let (mut sum_chunk_found, mut chunk_answers, mut chunk_verified) = (0u64, 0u32, 0u32);
    let mut exits: BTreeMap<String, u32> = BTreeMap::new();
    for case in &cases {
        if !documents.contains_key(&case.document) {
            let path = shared_pdf.clone().unwrap_or_else(|| root.join("fixtures").join(&case.document));
            let document = parse_pdf(&path).with_context(|| format!("parsing {}", path.display()))?;
            let baseline = ChunkBaseline::new(&document);
            documents.insert(case.document.clone(), (document, baseline));
        }
        let (document, baseline) = &documents[&case.document];
        let mut parsed =
            parser.parse(&case.question, &document.profile).with_context(|| format!("parsing {:?}", case.question))?;
        if let Some(context) = context {
            parsed.structural_hints.answer_context = context;
        }
        let retrieval = retriever.retrieve(&parsed, document, &mut NullSink)?;
        let top5_retrieval = naive.retrieve(&parsed, document, &mut NullSink)?;
        if verbose {
            for (label, r) in [("retrieval", &retrieval), ("naive top-5 retrieval", &top5_retrieval)] {
                println!("  {} {label}: {} passage(s), {} in the reserve", case.id, r.passages.len(), r.reserve.len());
                for note in &r.notes {
                    println!("  {} {label} note: {note}", case.id);
                }
            }
        }
        let (passages, top5) = (retrieval.passages, top5_retrieval.passages);
        let strategies: &[ChunkStrategy] = if case.listing {
            &[ChunkStrategy::Combined]
        } else {
            &[ChunkStrategy::Combined, ChunkStrategy::Sequential]
        };
        let mut runs = Vec::new();
        for &strategy in strategies {
            let mut question = parsed.clone();
            question.chunk_strategy = strategy;
            let run = dispatch.run(&format!("{} {strategy:?}", case.id), &question, document, &passages)?;
            *exits.entry(format!("{}:{}", run.strategy, run.exit)).or_default() += 1;
            if run.found {
                answers += 1;
                verified_answers += u32::from(run.verified);
            }
            runs.push(run);
        }
        let mut question = parsed.clone();
        question.chunk_strategy = ChunkStrategy::Combined;
        let top5_run = dispatch.run(&format!("{} naive top-5 Combined", case.id), &question, document, &top5)?;
        let overhead = dispatch.overhead(&bpe, &parsed, document)?;
        // The usual RAG call: five ~512-token chunks by BM25, one combined call.
        let chunks = baseline.passages(&case.question);
        let chunk_run =
            dispatch.run(&format!("{} naive chunk top-5 Combined", case.id), &question, document, &chunks)?;
        let combined = &runs[0];
        let sequential = runs.get(1);
        let saved = sequential
            .map(|s| format!("{:.0}%", 100.0 * (1.0 - s.input as f64 / combined.input.max(1) as f64)))
            .unwrap_or_else(|| "-".to_owned());
        if let Some(seq) = sequential {
            sum_comb += combined.input;
            sum_seq += seq.input;
            if !case.answers.is_empty() {
                sum_comb_found += combined.input;
                sum_seq_found += seq.input;
                sum_top5_found += top5_run.input;
                // Every call pays it; a question without passages makes none.
                if seq.calls > 0 {
                    sum_overhead_found += overhead;
                    n_called += 1;
                }
                sum_seq_calls_found += u64::from(seq.calls);
                n_found += 1;
                seq_answers_found += u32::from(seq.found);
                if top5_run.found {
                    top5_answers += 1;
                    top5_verified += u32::from(top5_run.verified);
                }
                sum_chunk_found += chunk_run.input;
                if chunk_run.found {
                    chunk_answers += 1;
                    chunk_verified += u32::from(chunk_run.verified);
                }
            }
        }
        let verified =
            runs.iter().filter(|r| r.found).map(|r| if r.verified { "yes" } else { "NO" }).collect::<Vec<_>>();
        println!(
            "{:<18} {:<7} {:>4} {:>9} {:>9} {:>6} {:>5} {:<12} {:<12} {:>8} {:>9} {:>9} {:>8} {:>9}",
            case.id,
            if case.listing { "listing" } else { "single" },
            passages.len(),
            combined.input,
            sequential.map(|s| s.input.to_string()).unwrap_or_else(|| "-".into()),
            saved,
            sequential.map(|s| s.calls).unwrap_or(combined.calls),
            sequential.map(|s| s.exit.as_str()).unwrap_or("-"),
            format!("{}{}", combined.exit, if combined.strategy == "combined" { "" } else { "*" }),
            if verified.is_empty() { "-".to_owned() } else { verified.join("/") },
            top5.len(),
            format!("{}{}", top5_run.input, if top5_run.strategy == "combined" { "" } else { "*" }),
            overhead,
            chunk_run.input,
        );
    }
    let pct = |part: u64, whole: u64| 100.0 * (1.0 - part as f64 / whole.max(1) as f64);
    println!();
    println!(
        "single-fact, answerable: combined {sum_comb_found} vs sequential {sum_seq_found} input tokens: {:.1}% saved (target >= 65%)",
        pct(sum_seq_found, sum_comb_found)
    );
    println!(
        "single-fact, all (incl. unanswerable): combined {sum_comb} vs sequential {sum_seq} input tokens: {:.1}% saved",
        pct(sum_seq, sum_comb)
    );
    println!(
        "answers with every citation verified: {verified_answers}/{answers} ({:.0}%)",
        100.0 * f64::from(verified_answers) / f64::from(answers.max(1))
    );
    println!(
        "single-fact, answerable: naive top-5 combined (no relevance floor) {sum_top5_found} vs sequential {sum_seq_found} input tokens: {:.1}% saved (target >= 65%)",
        pct(sum_seq_found, sum_top5_found)
    );
    println!(
        "single-fact, answerable: naive top-5 combined {sum_top5_found} vs combined {sum_comb_found} input tokens: {:.1}% saved by the relevance floor alone",
        pct(sum_comb_found, sum_top5_found)
    );
    println!(
        "single-fact, answerable: answers found by sequential {seq_answers_found}/{n_found}, by naive top-5 combined {top5_answers}/{n_found} ({top5_verified} with every citation verified)"
    );
    println!(
        "single-fact, answerable: naive chunk top-5 combined (the usual RAG call: {} chunks of ~{} tokens by BM25) {sum_chunk_found} vs sequential {sum_seq_found} input tokens: {:.1}% saved; answers found {chunk_answers}/{n_found} ({chunk_verified} with every citation verified)",
        BASELINE_TOP_K,
        BASELINE_CHUNKS.max_tokens,
        pct(sum_seq_found, sum_chunk_found)
    );
    let mean = |sum: u64| sum as f64 / n_found.max(1) as f64;
    println!(
        "fixed per-call overhead (system prompt + user header, no passages), single-fact answerable: mean {:.0} input tokens = {:.0}% of a combined call (mean {:.0}), {:.0}% of a naive top-5 combined call (mean {:.0}); sequential makes {:.2} calls per question; one call's overhead alone caps the saving at {:.1}% vs combined, {:.1}% vs naive top-5",
        sum_overhead_found as f64 / n_called.max(1) as f64,
        100.0 * sum_overhead_found as f64 / sum_comb_found.max(1) as f64,
        mean(sum_comb_found),
        100.0 * sum_overhead_found as f64 / sum_top5_found.max(1) as f64,
        mean(sum_top5_found),
        mean(sum_seq_calls_found),
        pct(sum_overhead_found, sum_comb_found),
        pct(sum_overhead_found, sum_top5_found),
    );
    let exits: Vec<String> = exits.iter().map(|(exit, n)| format!("{exit} {n}")).collect();
    println!("exits (strategy:exit count): {}", exits.join(", "));
    if record {
        println!("recorded {} responses in {}", model.recorded.borrow(), replay_dir.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The shared NIST set keeps the lookups only, with the heading line as
    /// evidence and the title as the gold value.
    #[test]
    fn nist_lookups_become_cases() {
        let tmp = docintel_test_support::temp_dir("eval-gen-nist");
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("core")).unwrap();
        let qa = serde_json::json!({"source": "test", "items": [
            {"question": "What is the title of control PM-23?", "answer": "Data Governance Body", "control_id": "PM-23", "kind": "lookup"},
            {"question": "Which controls are related to PM-23?", "answer": "AT-2, AT-3", "control_id": "PM-23", "kind": "list"},
        ]});
        std::fs::write(dir.join("core/nist_sp800-53r5_rendered_qa.json"), qa.to_string()).unwrap();
        let (pdf, cases) = super::nist_cases(dir).unwrap();
        assert!(pdf.ends_with("core/nist_sp800-53r5_catalog_rendered.pdf"));
        assert_eq!(cases.len(), 1);
        assert_eq!(cases[0].id, "nist_PM-23");
        assert_eq!(cases[0].answers[0].evidence, vec![vec!["PM-23 Data Governance Body".to_owned()]]);
        assert_eq!(cases[0].answers[0].value, "Data Governance Body");
    }

    /// The committed recordings match today's prompts, schemas, question
    /// parsing and retrieval, for every call of the three dispatches
    /// (combined, sequential, naive top-5 combined): a replay miss or a usage
    /// mismatch is an error.
    #[test]
    fn recorded_replies_replay_for_both_contexts() {
        super::run(&[]).expect("replay of fixtures/eval/generation/replay");
        super::run(&["--context".to_owned(), "page".to_owned()]).expect("replay of replay-page");
    }
}
