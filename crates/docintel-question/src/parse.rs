//! The rule parse of one question ([`RuleParser::parse`]'s steps, in
//! order), and the pieces of it the model parser reuses: the asked phrase and
//! its constraints, the anchor keywords, the text without format phrases.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;

use docintel_schema::{
    AnswerContext, AnswerShape, AskedPart, ChunkStrategy, Decomposition, DecompositionPattern, Distinction,
    DocumentProfile, GenerationBrief, Keyword, KeywordSource, ParsedQuestion, RetrievalQuery, ScopeFilters,
    StructuralHints,
};

use crate::constraints::DistractorHit;
use crate::lexicon::{collapse_whitespace, detect_language, is_stop, masked, strip_clitic, tokenize};
use crate::{
    AMBIGUOUS_TERM, ANCHOR_WEIGHT, CascadeLevel, MAX_QUESTION_CHARS, PARSER_NAME, QuestionError, Resolved, RuleParser,
    TYPE_PATTERN_WEIGHT, TypeModel, chunk_name, classify, context_name, default_plan, finish_dispatch, quotient,
    resolve_answer_context, resolve_chunk_strategy, resolve_model, restrict,
};

/// "title of", "name of", "titre de"...: a question about an identifier's
/// heading (group 1 is the noun).
static HEADING_OF: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)\b(title|name|heading|titre|intitulé|nom|título|nombre|titel|bezeichnung)\s+(?:of|for|de|du|des|del|von|der)\b",
    )
    .expect("HEADING_OF compiles")
});

impl RuleParser {
    pub(crate) fn parse_question(
        &self,
        question: &str,
        profile: &DocumentProfile,
    ) -> Result<ParsedQuestion, QuestionError> {
        let corrected = collapse_whitespace(question);
        if !corrected.chars().any(char::is_alphanumeric) {
            return Err(QuestionError::Empty);
        }
        let chars = corrected.chars().count();
        if chars > MAX_QUESTION_CHARS {
            return Err(QuestionError::TooLong { chars, max: MAX_QUESTION_CHARS });
        }
        let tokens = tokenize(&corrected);
        let language = detect_language(&corrected, &tokens);
        let mut notes = Vec::new();
        if language.is_none() {
            notes.push("no language detected: stop words of every known language removed".to_owned());
        }

        // Format constraints: generation only. The task framing's rounding
        // and unit instructions ("Round your answer to two decimal places")
        // are format constraints too.
        let mut formats = self.constraints.formats(&corrected);
        formats.extend(self.framing.formats(&corrected));
        let format_spans: Vec<Range<usize>> = formats.iter().map(|f| f.span.clone()).collect();
        let mut format_constraints = BTreeMap::new();
        for hit in &formats {
            let phrase = &corrected[hit.span.clone()];
            match format_constraints.get(hit.key) {
                Some(kept) if kept != &hit.value => {
                    notes.push(format!("conflicting {} '{}' ignored: kept {kept}", hit.key, phrase));
                }
                Some(_) => {}
                None => {
                    notes.push(format!(
                        "format constraint {}={} ('{phrase}') kept for generation only",
                        hit.key, hit.value
                    ));
                    format_constraints.insert(hit.key.to_owned(), hit.value.clone());
                }
            }
        }
        // Task framing ("Assume you are an analyst.", "using the details
        // shown in the balance sheet"): not searched; the parts it names
        // become the section hints.
        let scan = self.parts.find(&corrected, MAX_PARTS);
        let part_hits = scan.parts;
        let framing_spans = self.framing.spans(&corrected, &scan.named_spans, language);
        if !framing_spans.is_empty() {
            notes.push(format!(
                "task framing not searched: {}",
                framing_spans
                    .iter()
                    .map(|s| format!("'{}'", corrected[s.clone()].trim()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !part_hits.is_empty() {
            notes.push(format!(
                "document part(s) pointed to: {}",
                part_hits
                    .iter()
                    .map(|h| format!("{} ({} '{}')", h.part, if h.named { "named as" } else { "implied by" }, h.phrase))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let mut query_spans = format_spans.clone();
        query_spans.extend(framing_spans.iter().cloned());
        let main_query = remove_spans(&corrected, &query_spans);

        // Pages, section, layout, period.
        let page_hints = self.hints.pages(&corrected);
        notes.extend(page_hints.notes.iter().cloned());
        let mut pages = page_hints.pages.clone();
        if let Some(n_pages) = profile.n_pages {
            let beyond: Vec<String> = pages.iter().filter(|&&p| p > n_pages).map(u32::to_string).collect();
            if !beyond.is_empty() {
                notes.push(format!("page(s) {} beyond the document's {n_pages} pages dropped", beyond.join(", ")));
                pages.retain(|&p| p <= n_pages);
            }
        }
        let page_spans: Vec<Range<usize>> = page_hints.phrases.iter().map(|(span, _)| span.clone()).collect();
        let section = self.hints.section(&corrected);
        let layout = self.hints.layout(&corrected);
        let document_itself = self.hints.document_itself(&corrected);
        let period = self.hints.period(&corrected);

        // Anchors and distractors.
        let mut exclude = format_spans.clone();
        exclude.extend(page_spans.iter().cloned());
        let anchors = self.anchors.find(&corrected, &exclude);
        let mut distractors = self.constraints.distractors(&corrected, &tokens, language);

        // Keywords: anchors and content words, in question order.
        let mut masks = exclude;
        masks.extend(framing_spans.iter().cloned());
        masks.extend(anchors.iter().map(|a| a.span.clone()));
        masks.extend(distractors.iter().map(|d| d.span.clone()));
        // "as a table" asks for a shape; "table" is not something to look for.
        masks.extend(self.classify.table_phrase(&corrected));
        // "the title of AC-2" asks for the heading the identifier opens; the
        // word "title" is not in it (and elsewhere it matches "Title 5").
        let mut asks_heading = false;
        if !anchors.is_empty() {
            for heading in HEADING_OF.captures_iter(&corrected).filter_map(|c| c.get(1)) {
                asks_heading = true;
                notes.push(format!(
                    "'{}' asks for the heading of an identifier: not searched as a word",
                    heading.as_str()
                ));
                masks.push(heading.range());
            }
        }
        let mut positioned: Vec<(usize, Keyword)> =
            anchors.iter().map(|a| (a.span.start, anchor_keyword(&a.text))).collect();
        for token in &tokens {
            if masked(&token.span(), &masks) {
                continue;
            }
            let lower = token.lower();
            let word = strip_clitic(&lower);
            let single_letter = word.chars().count() == 1 && !word.chars().all(|c| c.is_ascii_digit());
            if single_letter || is_stop(word, language) || word == "fy" {
                continue;
            }
            // "FY2018": filings print the year, not the abbreviation.
            let word = fiscal_year(word).unwrap_or(word);
            positioned.push((token.start, Keyword::direct(word)));
        }
        positioned.sort_by_key(|(at, _)| *at);
        let mut seen = HashSet::new();
        let keywords: Vec<Keyword> =
            positioned.into_iter().map(|(_, k)| k).filter(|k| seen.insert(k.text.to_lowercase())).collect();
        // "X in Article 18, not Y": nothing adjacent precedes the marker, so the
        // wanted side falls back to the first content word.
        for hit in distractors.iter_mut().filter(|d| d.wanted.is_empty()) {
            if let Some(first) = keywords.iter().find(|k| k.source == KeywordSource::Direct && k.text != hit.not_this) {
                hit.wanted = first.text.clone();
            }
        }
        // Expert dictionary: the concept's words in every language, on the
        // question without format phrases or distractors.
        let mut dictionary_spans = format_spans.clone();
        dictionary_spans.extend(distractors.iter().map(|d| d.span.clone()));
        let expansion = self.satellites.dictionary().expand(&remove_spans(&corrected, &dictionary_spans), &keywords);
        if !expansion.concepts.is_empty() {
            notes.push(format!(
                "expert dictionary (question in {}): concept(s) {} added {} keyword(s)",
                language.unwrap_or("an undetected language"),
                expansion.concepts.join(", "),
                expansion.keywords.len()
            ));
        }
        let matched_concept = expansion.concepts.first().cloned();
        let mut keywords = keywords;
        keywords.extend(expansion.keywords);
        let anchor_keywords: Vec<String> =
            keywords.iter().filter(|k| k.source == KeywordSource::Anchor).map(|k| k.text.clone()).collect();
        let direct_words: Vec<String> =
            keywords.iter().filter(|k| k.source == KeywordSource::Direct).map(|k| k.text.clone()).collect();

        // Decomposition (of the question without format phrases), then type
        // and shape on the question without format phrases and distractors
        // (the first sub-question for a compound).
        let (decomposition, decomposition_notes) = self.decompose.decompose(&main_query, language);
        notes.extend(decomposition_notes);
        let mut focus_spans = query_spans.clone();
        focus_spans.extend(distractors.iter().map(|d| d.span.clone()));
        let focus = remove_spans(&corrected, &focus_spans);
        let mut answer_type = self.answer_type(&focus, &decomposition, language, &mut notes);
        let (answer_focus, constraints) = self.asked(&focus, language);
        // A pair kept whole for retrieval ("the record date and the payment
        // date") is still two values to read.
        let (distributed, coordination) = match (&decomposition.pattern, &answer_focus) {
            (DecompositionPattern::Unified | DecompositionPattern::Single, Some(asked)) => {
                match self.decompose.distribute(&focus, asked, language) {
                    Some(d) => (d.parts.to_vec(), Some(d.joined)),
                    None => (Vec::new(), None),
                }
            }
            _ => (Vec::new(), None),
        };
        // "Current liabilities to total liabilities, rounded to three
        // decimals": two figures and their quotient.
        let percent_wanted = format_constraints.get("unit").is_some_and(|u| u == "percent");
        let ratio_wanted = format_constraints.contains_key("decimals") || percent_wanted;
        let quotient = if distributed.is_empty() && decomposition.pattern != DecompositionPattern::Independent {
            quotient::split(&focus, ratio_wanted, percent_wanted)
                .or_else(|| quotient::split(&corrected, ratio_wanted, percent_wanted))
        } else {
            None
        };
        if let Some((computed, [first, second])) = &quotient {
            notes.push(format!("computed ({computed:?}) from '{first}' and '{second}'"));
        }
        let quotient_parts: Vec<String> = quotient.iter().flat_map(|(_, parts)| parts.iter().cloned()).collect();
        let asked_parts: &[String] = if !quotient_parts.is_empty() {
            &quotient_parts
        } else if !distributed.is_empty() {
            &distributed
        } else if decomposition.pattern == DecompositionPattern::Independent {
            &decomposition.sub_questions
        } else {
            &[]
        };
        let parts: Vec<AskedPart> = if asked_parts.len() >= 2 {
            asked_parts
                .iter()
                .map(|q| {
                    let (answer_focus, constraints) = self.asked(q, language);
                    AskedPart {
                        question: q.clone(),
                        // Each side of a quotient is a figure of the statements.
                        answer_type: if quotient.is_some() {
                            "amount".to_owned()
                        } else {
                            self.typed(q, language, None)
                        },
                        answer_focus,
                        constraints,
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        // "(in USD millions)", "Answer in EUR": the question wants an amount
        // even when its words name no amount.
        let money_format = format_constraints.contains_key("currency")
            || format_constraints
                .get("unit")
                .is_some_and(|u| matches!(u.as_str(), "thousands" | "millions" | "billions"));
        let numeric = matches!(answer_type.as_str(), "text" | "number" | "count" | "year" | "percentage");
        if numeric && money_format && self.satellites.answer_type("amount").is_some() {
            notes.push("answer type amount: the question asks for a currency or a money scale".to_owned());
            answer_type = "amount".to_owned();
        }
        // "Answer in units of percents": a percentage, whatever the words
        // it is a percentage of ("revenue growth rate", "capex as a % of
        // revenue").
        let percent_format = format_constraints.get("unit").is_some_and(|u| u == "percent");
        let loose = matches!(answer_type.as_str(), "text" | "number" | "amount");
        if percent_format && loose && self.satellites.answer_type("percentage").is_some() {
            notes.push("answer type percentage: the question asks for the answer in percent".to_owned());
            answer_type = "percentage".to_owned();
        }
        if self.satellites.answer_type(&answer_type).is_none() {
            notes.push(format!("answer type '{answer_type}' is not in the answer types table: text instead"));
            answer_type = "text".to_owned();
        }
        if quotient.is_some() {
            let wanted = if percent_format { "percentage" } else { "number" };
            if self.satellites.answer_type(wanted).is_some() && answer_type != wanted {
                notes.push(format!("answer type {wanted}: the question asks for a quotient"));
                answer_type = wanted.to_owned();
            }
        }
        let mut answer_shape = self.classify.answer_shape(&focus, &answer_type);
        // "What are the customer number and the contract number": a pair of
        // singular noun phrases is one value each, not a list ("what are"
        // only agrees with the pair).
        if answer_shape == AnswerShape::Listing
            && !distributed.is_empty()
            && parts.iter().all(|p| p.answer_focus.as_deref().is_some_and(|f| !plural_head(f)))
        {
            notes.push("answer shape single per part: a pair of singular noun phrases".to_owned());
            answer_shape = AnswerShape::Single;
        }
        // The type's confirmation regex joins the search when the expert
        // dictionary recognised the concept: a premium is looked for as a
        // money amount near the word, not as the word alone.
        if let Some((keyword, note)) = self.type_pattern_keyword(&answer_type, matched_concept.as_deref()) {
            keywords.push(keyword);
            notes.push(note);
        }

        // Structural hints.
        let needs_summary = self.classify.needs_summary(&corrected);
        // The wording decides the context when it says something; otherwise
        // the cascade (concept > shape > project).
        let worded_context = if section.as_ref().is_some_and(|s| s.by_topic) {
            Some(AnswerContext::Section)
        } else if !pages.is_empty() && (needs_summary || self.classify.asks_page_content(&corrected)) {
            Some(AnswerContext::Page)
        } else if needs_summary && section.is_some() {
            Some(AnswerContext::Section)
        } else if needs_summary {
            Some(AnswerContext::Document)
        } else if answer_type == "text" && self.classify.asks_explanation(&corrected) {
            Some(AnswerContext::Paragraph)
        } else {
            None
        };
        let concept = matched_concept.as_deref();
        let context = match worded_context {
            Some(value) => Resolved { value, level: CascadeLevel::Question },
            None => resolve_answer_context(&self.satellites, answer_shape, concept, &self.defaults),
        };
        let answer_context = context.value;
        let chunk = if needs_summary {
            Resolved { value: ChunkStrategy::Combined, level: CascadeLevel::Question }
        } else {
            resolve_chunk_strategy(&self.satellites, answer_shape, concept, &self.defaults)
        };
        let model = resolve_model(&self.satellites, &answer_type, concept, &self.defaults);
        notes.push(format!(
            "defaults: answer_context={} ({}), chunk_strategy={} ({}), model={} ({})",
            context_name(context.value),
            context.level,
            chunk_name(chunk.value),
            chunk.level,
            model.value,
            model.level
        ));
        let mut triggers: Vec<String> = page_hints.phrases.iter().map(|(_, phrase)| phrase.clone()).collect();
        triggers.extend(section.iter().map(|s| s.phrase.clone()));
        triggers.extend(layout.iter().map(|(_, phrase)| phrase.clone()));
        triggers.extend(document_itself.iter().cloned());
        let structural_hints = StructuralHints {
            pages_hint: pages.clone(),
            toc_section_hint: section.as_ref().map(|s| s.hint.clone()),
            layout_hint: layout.map(|(element, _)| element).or_else(|| asks_heading.then(|| "heading".to_owned())),
            detection_context: (!triggers.is_empty()).then(|| triggers.join("; ")),
            answer_context,
            needs_summary,
            about_document: document_itself.is_some(),
        };

        // Distinctions.
        let disambiguation = disambiguation_sentence(&distractors);
        let must_distinguish: Vec<Distinction> = distractors
            .iter()
            .map(|d| Distinction { wanted: d.wanted.clone(), not_this: d.not_this.clone() })
            .collect();

        // A question with nothing to look for, or naming only a generic term
        // several concepts answer to.
        let referents =
            self.bare_term_referents(&direct_words, &anchor_keywords, matched_concept.as_deref(), &distractors);
        let (ambiguity_reason, suggested_clarification) = if let Some((term, referents)) = referents {
            notes.push(format!(
                "ambiguous: '{term}' may mean {} ({}); clarification suggested before running the pipeline",
                referents.len(),
                referents.join(", ")
            ));
            let labels: Vec<String> = referents.iter().map(|r| r.replace('_', " ")).collect();
            (
                Some(AMBIGUOUS_TERM.to_owned()),
                Some(format!("'{term}' can mean different things here: {}. Which one do you want?", or_list(&labels))),
            )
        } else if direct_words.is_empty()
            && anchor_keywords.is_empty()
            && pages.is_empty()
            && section.is_none()
            && !needs_summary
        {
            (
                Some("the question names nothing to look for".to_owned()),
                Some("What information are you looking for in the document?".to_owned()),
            )
        } else {
            (None, None)
        };

        let sections: Vec<String> = part_hits.iter().map(|h| self.parts.titles(&h.part)).collect();
        let scope = ScopeFilters { period, sections, ..ScopeFilters::default() };
        let chunk_strategy = chunk.value;
        let parsed = ParsedQuestion {
            original_question: question.to_owned(),
            corrected_question: corrected.clone(),
            language: language.map(str::to_owned),
            keywords,
            answer_shape,
            answer_type,
            matched_concept,
            decomposition,
            scope_filters: scope.clone(),
            structural_hints,
            chunk_strategy,
            suggested_model: model.value,
            disambiguation: disambiguation.clone(),
            distractors: distractors.iter().map(|d| d.not_this.clone()).collect(),
            activations: default_plan(),
            parsing_notes: Vec::new(),
            suggested_clarification,
            ambiguity_reason,
            parser: PARSER_NAME.to_owned(),
            retrieval: RetrievalQuery {
                main_query,
                rewrites: Vec::new(),
                anchor_keywords,
                section_hint: section.map(|s| s.hint),
                pages,
                scope,
                follow_up_keywords: Vec::new(),
            },
            generation: GenerationBrief {
                original_question: question.to_owned(),
                format_constraints,
                disambiguation,
                must_distinguish,
                answer_focus,
                constraints,
                parts,
                coordination,
                computed: quotient.as_ref().map(|(computed, _)| *computed),
            },
        };
        Ok(finish_dispatch(parsed, notes, profile))
    }

    /// The focus of `text` (the noun phrase it asks for, see
    /// [`classify::asked_phrase`]) and its constraints (see [`restrict`]).
    pub(crate) fn asked(&self, text: &str, language: Option<&str>) -> (Option<String>, Vec<String>) {
        let tokens = tokenize(text);
        // A year or period in the asked phrase ("the FY2018 capital
        // expenditure") restricts the value; it is a constraint, not what
        // the value is a value of.
        let focus = classify::asked_phrase(&tokens, text)
            .map(|a| a.words.into_iter().filter(|w| restrict::year_of(w).is_none()).collect::<Vec<_>>().join(" "))
            .filter(|f| !f.is_empty());
        // The focus is what is asked, not a restriction on it ("COGS" in
        // "what is the FY2016 COGS"): its words are no constraint.
        let focus_words: Vec<String> =
            focus.as_deref().unwrap_or_default().split_whitespace().map(docintel_schema::text::normalize).collect();
        let constraints = restrict::constraints(text, &tokens, language)
            .into_iter()
            .filter(|c| {
                let words: Vec<String> = c.split_whitespace().map(docintel_schema::text::normalize).collect();
                !words.iter().all(|w| focus_words.contains(w))
            })
            // A part of the document named as where to look ("in its
            // Balance Sheet") routes the search; it restricts no value.
            .filter(|c| {
                !self.parts.find(c, MAX_PARTS).parts.iter().any(|hit| hit.named && hit.span.len() == c.trim().len())
            })
            .collect();
        (focus, constraints)
    }

    /// The answer type's confirmation regex as an `expert_dictionary`
    /// keyword of `concept`, with its note, when a concept was recognised and
    /// the type has a pattern.
    pub(crate) fn type_pattern_keyword(&self, answer_type: &str, concept: Option<&str>) -> Option<(Keyword, String)> {
        let concept = concept?;
        let pattern = self.satellites.answer_type(answer_type)?.retrieval_patterns.as_deref()?;
        let keyword = Keyword {
            text: pattern.to_owned(),
            weight: TYPE_PATTERN_WEIGHT,
            source: KeywordSource::ExpertDictionary,
            is_regex: true,
            semantic_group: Some(concept.to_owned()),
        };
        Some((keyword, format!("{answer_type} confirmation regex added as a keyword for concept {concept}")))
    }

    /// The anchor keywords of `text`, found exactly as [`RuleParser::parse`]
    /// finds them (format phrases and page phrases excluded). Whichever
    /// parser filled the record, anchors come from here.
    pub(crate) fn anchor_keywords(&self, text: &str) -> Vec<Keyword> {
        let mut exclude: Vec<Range<usize>> = self.constraints.formats(text).into_iter().map(|f| f.span).collect();
        exclude.extend(self.hints.pages(text).phrases.into_iter().map(|(span, _)| span));
        self.anchors.find(text, &exclude).iter().map(|a| anchor_keyword(&a.text)).collect()
    }

    /// `text` without its format phrases ("in EUR"), as the retrieval query
    /// sees it.
    pub(crate) fn without_formats(&self, text: &str) -> String {
        let spans: Vec<Range<usize>> = self.constraints.formats(text).into_iter().map(|f| f.span).collect();
        remove_spans(text, &spans)
    }

    /// `text` as the expert dictionary reads it: without format phrases and
    /// without distractors ("not the deductible" names no concept asked for).
    pub(crate) fn dictionary_text(&self, text: &str) -> String {
        let tokens = tokenize(text);
        let language = detect_language(text, &tokens);
        let mut spans: Vec<Range<usize>> = self.constraints.formats(text).into_iter().map(|f| f.span).collect();
        spans.extend(self.constraints.distractors(text, &tokens, language).into_iter().map(|d| d.span));
        remove_spans(text, &spans)
    }

    /// The generic term the question names and nothing else, with the
    /// concepts it may refer to, when there are two or more of them and no
    /// concept, anchor or qualifier narrows it ("What's the limit?", but not
    /// "What's the aggregate limit?"). Concepts named as distractors ("not
    /// the deductible") are not counted.
    fn bare_term_referents(
        &self,
        direct_words: &[String],
        anchors: &[String],
        matched_concept: Option<&str>,
        distractors: &[DistractorHit],
    ) -> Option<(String, Vec<String>)> {
        let [term] = direct_words else { return None };
        if matched_concept.is_some() || !anchors.is_empty() {
            return None;
        }
        let excluded: Vec<&str> =
            distractors.iter().flat_map(|d| self.satellites.dictionary().concepts_named(&d.not_this)).collect();
        let referents: Vec<String> = self
            .satellites
            .referents(term)
            .into_iter()
            .filter(|c| !excluded.contains(&c.name.as_str()))
            .map(|c| c.name.clone())
            .collect();
        (referents.len() >= 2).then(|| (term.clone(), referents))
    }

    /// The answer type of the question, or of its first sub-question when it
    /// splits into independent ones (with a note when the parts differ).
    fn answer_type(
        &self,
        focus: &str,
        decomposition: &Decomposition,
        language: Option<&str>,
        notes: &mut Vec<String>,
    ) -> String {
        if decomposition.pattern != DecompositionPattern::Independent || decomposition.sub_questions.is_empty() {
            return self.typed(focus, language, Some(notes));
        }
        let types: Vec<String> = decomposition.sub_questions.iter().map(|q| self.typed(q, language, None)).collect();
        if types.iter().any(|t| *t != types[0]) {
            notes.push(format!(
                "sub-questions expect different answer types ({}): answer_type is the first one's",
                types.join(", ")
            ));
        }
        types[0].clone()
    }

    /// The answer type of `text`: the rules' ([`ClassifyRules::answer_type`]);
    /// where they fell back to `text`, the learned type model's
    /// ([`TypeModel::decide`]) when it is sure enough (noted when `notes` is
    /// given).
    fn typed(&self, text: &str, language: Option<&str>, notes: Option<&mut Vec<String>>) -> String {
        let rule_type = self.classify.answer_type(text, language, &self.satellites);
        let Some(verdict) = TypeModel::builtin()
            .and_then(|model| model.decide(text, rule_type))
            .filter(|v| self.satellites.answer_type(&v.answer_type).is_some())
        else {
            return rule_type.to_owned();
        };
        if let Some(notes) = notes {
            notes.push(format!(
                "answer type {} from the learned type model (p = {:.2}); the rules said {rule_type}",
                verdict.answer_type, verdict.probability
            ));
        }
        verdict.answer_type
    }
}

/// Whether the last word of a noun phrase is a plural in -s (see
/// [`classify::plural_in_s`]) or in -x ("montants", "limits"; "prix" reads as
/// one too).
fn plural_head(phrase: &str) -> bool {
    phrase
        .split_whitespace()
        .last()
        .is_some_and(|w| classify::plural_in_s(w) || (w.chars().count() > 3 && w.ends_with('x')))
}

/// At most this many document parts per question.
const MAX_PARTS: usize = 3;

/// `2018` for `fy2018`.
fn fiscal_year(word: &str) -> Option<&str> {
    let year = word.strip_prefix("fy")?;
    (year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit())).then_some(year)
}

/// An anchor found by regex, as a keyword.
fn anchor_keyword(text: &str) -> Keyword {
    Keyword {
        text: text.to_owned(),
        weight: ANCHOR_WEIGHT,
        source: KeywordSource::Anchor,
        is_regex: false,
        semantic_group: None,
    }
}

/// "a, b or c".
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// One sentence per distinction, for the generation brief.
fn disambiguation_sentence(distractors: &[DistractorHit]) -> Option<String> {
    let sentences: Vec<String> = distractors
        .iter()
        .map(|d| {
            if d.wanted.is_empty() {
                format!("The answer must not be the {}.", d.not_this)
            } else {
                format!("The question asks for the {}, not the {}.", d.wanted, d.not_this)
            }
        })
        .collect();
    (!sentences.is_empty()).then(|| sentences.join(" "))
}

/// `text` without the byte ranges `spans`, tidied: no space or comma left
/// before a closing punctuation mark, no dangling conjunction at the end.
fn remove_spans(text: &str, spans: &[Range<usize>]) -> String {
    let mut spans: Vec<Range<usize>> = spans.to_vec();
    spans.sort_by_key(|s| s.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        if span.end <= at {
            continue;
        }
        out.push_str(&text[at..span.start.max(at)]);
        at = span.end;
        let rest = &text[at..];
        if rest.is_empty() || rest.starts_with(['?', '!', '.', ',', ';', ':']) {
            let trimmed = out.trim_end().trim_end_matches([',', ';', ':']).trim_end().len();
            out.truncate(trimmed);
        }
    }
    out.push_str(&text[at..]);
    let mut out = collapse_whitespace(&out);
    for conjunction in [" and", " et", " y", " und", " и"] {
        if let Some(stripped) = out.strip_suffix(conjunction) {
            out = stripped.to_owned();
        }
    }
    out
}
