//! Answer kinds: what a question asks for and where a value of that kind is
//! in a row. One file per kind; each has a `find` giving the typed values of
//! one row of a passage, with their *fit* (how surely the span is a value of
//! the kind: a percentage with its `%` sign fits fully, a bare decimal for
//! "what rate" fits half). A kind may also read label *cues* (amounts:
//! "total", "subtotal", "tax"; dates: "due", "order"), which the learned
//! scoring weighs.
//!
//! Adding a kind: a row in the question brick's `answer_types.csv` (its cue
//! and head nouns, its schema in the registry) and a file here wired into
//! [`Kind`].

mod amount;
mod boolean;
mod count;
mod date;
mod degree;
mod duration;
mod email;
mod iban;
pub(crate) mod identifier;
mod location;
mod number;
mod organisation;
mod percentage;
mod person;
mod phone;
mod role;
pub(crate) mod text;
mod title;
mod url;
mod year;

use docintel_schema::{AnswerValue, Line};

use crate::extract::date::DayMonthOrder;

pub(crate) use amount::AmountIntent;
pub(crate) use date::DateIntent;

/// What a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Count,
    Number,
    Percentage,
    Amount,
    Date,
    Year,
    Duration,
    Person,
    Organisation,
    Role,
    Degree,
    Location,
    Email,
    Url,
    Phone,
    Iban,
    Identifier,
    Title,
    Boolean,
    Text,
}

/// Kinds whose candidates share one fitted scoring model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Group {
    /// The amount a document asks to pay ("the total", "how much is due"):
    /// its labels (total, sub-total, tax) decide.
    AmountDue,
    /// Other amounts of money (a reported figure, a limit, a fee).
    Amount,
    /// Counts, numbers, percentages, years, durations.
    Numeric,
    /// Calendar dates.
    Date,
    /// People, organisations, places, codes, contacts.
    Named,
    /// Sentences, label values, yes/no.
    Text,
}

impl Group {
    pub(crate) const ALL: [Group; 6] =
        [Group::AmountDue, Group::Amount, Group::Numeric, Group::Date, Group::Named, Group::Text];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Group::AmountDue => "amount_due",
            Group::Amount => "amount",
            Group::Numeric => "numeric",
            Group::Date => "date",
            Group::Named => "named",
            Group::Text => "text",
        }
    }
}

impl Kind {
    /// The kind of an answer type (a row of the answer types table); types
    /// without a kind of their own (`address`, a project's custom type) read
    /// as text.
    pub(crate) fn of(answer_type: &str) -> Kind {
        match answer_type {
            "count" => Kind::Count,
            "number" => Kind::Number,
            "percentage" => Kind::Percentage,
            "amount" | "money" | "price" | "premium" => Kind::Amount,
            "date" => Kind::Date,
            "year" => Kind::Year,
            "duration" => Kind::Duration,
            "person" => Kind::Person,
            "organisation" | "organization" => Kind::Organisation,
            "role" => Kind::Role,
            "degree" => Kind::Degree,
            "location" => Kind::Location,
            "email" => Kind::Email,
            "url" => Kind::Url,
            "phone" => Kind::Phone,
            "iban" => Kind::Iban,
            "identifier" => Kind::Identifier,
            "title" => Kind::Title,
            "boolean" => Kind::Boolean,
            _ => Kind::Text,
        }
    }

    pub(crate) fn group(self) -> Group {
        match self {
            Kind::Amount => Group::Amount,
            Kind::Count | Kind::Number | Kind::Percentage | Kind::Year | Kind::Duration => Group::Numeric,
            Kind::Date => Group::Date,
            Kind::Person
            | Kind::Organisation
            | Kind::Role
            | Kind::Degree
            | Kind::Location
            | Kind::Email
            | Kind::Url
            | Kind::Phone
            | Kind::Iban
            | Kind::Identifier
            | Kind::Title => Group::Named,
            Kind::Boolean | Kind::Text => Group::Text,
        }
    }

    /// What the reader looks for, in plain words (for not-found warnings).
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::Count => "count",
            Kind::Number => "number",
            Kind::Percentage => "percentage or rate",
            Kind::Amount => "amount",
            Kind::Date => "date",
            Kind::Year => "year",
            Kind::Duration => "duration",
            Kind::Person => "person's name",
            Kind::Organisation => "organisation's name",
            Kind::Role => "role or job title",
            Kind::Degree => "degree or diploma",
            Kind::Location => "place",
            Kind::Email => "e-mail address",
            Kind::Url => "URL",
            Kind::Phone => "phone number",
            Kind::Iban => "IBAN",
            Kind::Identifier => "identifier",
            Kind::Title => "title",
            Kind::Boolean => "statement answering the question",
            Kind::Text => "passage answering the question",
        }
    }

    /// The other kinds a question of this kind is read for too: the wording
    /// does not always tell how a document states the answer ("what fee" is
    /// paid as 5.2%, "what co-payment" is 20%, "which university" may be
    /// printed as an organisation or a place, "what abbreviation" is a code).
    /// Their values compete with the asked kind's under the feature
    /// `kind_other`, which the fitted model weighs (soft type coercion, as
    /// in DeepQA: no hard type filter).
    pub(crate) fn also(self) -> &'static [Kind] {
        match self {
            Kind::Amount => &[Kind::Percentage],
            Kind::Percentage => &[Kind::Amount, Kind::Number],
            Kind::Year => &[Kind::Date],
            Kind::Person => &[Kind::Organisation],
            Kind::Organisation => &[Kind::Person, Kind::Location],
            Kind::Location => &[Kind::Organisation],
            Kind::Identifier => &[Kind::Phone, Kind::Iban],
            Kind::Count | Kind::Number | Kind::Duration | Kind::Date | Kind::Text => &[],
            Kind::Email
            | Kind::Url
            | Kind::Phone
            | Kind::Iban
            | Kind::Title
            | Kind::Boolean
            | Kind::Degree
            | Kind::Role => &[],
        }
    }

    /// The answer type (a row of the answer types table) of this kind.
    pub(crate) fn answer_type(self) -> &'static str {
        match self {
            Kind::Count => "count",
            Kind::Number => "number",
            Kind::Percentage => "percentage",
            Kind::Amount => "amount",
            Kind::Date => "date",
            Kind::Year => "year",
            Kind::Duration => "duration",
            Kind::Person => "person",
            Kind::Organisation => "organisation",
            Kind::Role => "role",
            Kind::Degree => "degree",
            Kind::Location => "location",
            Kind::Email => "email",
            Kind::Url => "url",
            Kind::Phone => "phone",
            Kind::Iban => "iban",
            Kind::Identifier => "identifier",
            Kind::Title => "title",
            Kind::Boolean => "boolean",
            Kind::Text => "text",
        }
    }

    /// Whether a value of this kind is a few words copied from its row
    /// (a name, a code), as opposed to a number or a sentence.
    pub(crate) fn is_named(self) -> bool {
        self.group() == Group::Named
    }
}

/// What a kind's finder knows besides the row.
#[derive(Debug, Clone)]
pub(crate) struct FindContext {
    pub(crate) order: DayMonthOrder,
    /// The currency of the passage, else of its page.
    pub(crate) currency: Option<&'static str>,
    /// A scale word stated for the passage (`in millions`).
    pub(crate) scale: Option<&'static str>,
    /// The focus words of the question.
    pub(crate) focus: Vec<String>,
    /// The row goes on a printed line that another row began to its left
    /// (a table cell after its row's label: "Joseph J. Wolk | 56 Member,
    /// …"): a number opening it is a value, not a clause number.
    pub(crate) mid_line: bool,
}

impl FindContext {
    /// A context that knows only the question's focus words (tests).
    #[cfg(test)]
    pub(crate) fn with_focus(focus: &[&str]) -> FindContext {
        FindContext {
            order: DayMonthOrder::MonthFirst,
            currency: None,
            scale: None,
            focus: focus.iter().map(|f| (*f).to_owned()).collect(),
            mid_line: false,
        }
    }
}

/// A typed value found in a row of a passage.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// Byte range in the row's text.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The last row (index into the passage rows) the value reads on; the
    /// row itself for values on one row.
    pub(crate) last_row: usize,
    pub(crate) value: AnswerValue,
    /// The value as written.
    pub(crate) text: String,
    /// How surely it is a value of the kind, in [0, 1].
    pub(crate) fit: f64,
    /// A currency was written next to it (amounts).
    pub(crate) currency_written: bool,
    /// The row (index into the passage rows) the value starts on.
    pub(crate) row: usize,
    /// The row that introduces the value on the row before it ("... known
    /// as:"): read and cited as its label.
    pub(crate) intro: Option<usize>,
    /// The kind whose finder read it (the asked kind, or one of
    /// [`Kind::also`]).
    pub(crate) kind: Kind,
}

impl Found {
    pub(crate) fn new(start: usize, end: usize, row: usize, value: AnswerValue, text: &str, fit: f64) -> Found {
        Found {
            start,
            end,
            last_row: row,
            row,
            value,
            text: text.to_owned(),
            fit,
            currency_written: false,
            intro: None,
            kind: Kind::Text,
        }
    }
}

/// The typed values of kind `kind` on row `i` of a passage's rows.
pub(crate) fn find(kind: Kind, rows: &[&Line], i: usize, ctx: &FindContext) -> Vec<Found> {
    let text = rows[i].text.as_str();
    let cell;
    let ctx = if i > 0 && (continues_printed_line(rows[i - 1], rows[i]) || wraps_sentence(rows[i - 1], rows[i])) {
        cell = FindContext { mid_line: true, ..ctx.clone() };
        &cell
    } else {
        ctx
    };
    let mut found = match kind {
        Kind::Count => count::find(text, i, ctx),
        Kind::Number => number::find(text, i, ctx),
        Kind::Percentage => percentage::find(text, i, ctx),
        Kind::Amount => amount::find(text, i, ctx),
        Kind::Date => date::find(text, i, ctx),
        Kind::Year => year::find(text, i, ctx),
        Kind::Duration => duration::find(text, i, ctx),
        Kind::Person => person::find(text, i),
        Kind::Organisation => organisation::find(text, i, ctx),
        Kind::Role => role::find(text, i, ctx),
        Kind::Degree => degree::find(text, i, ctx),
        Kind::Location => location::find(text, i, ctx),
        Kind::Email => email::find(text, i),
        Kind::Url => url::find(text, i),
        Kind::Phone => phone::find(text, i),
        Kind::Iban => iban::find(text, i),
        Kind::Identifier => identifier::find(rows, i, ctx),
        Kind::Title => title::find(rows, i, ctx),
        Kind::Boolean => boolean::find(rows, i),
        Kind::Text => text::find(rows, i),
    };
    for f in &mut found {
        f.kind = kind;
    }
    found
}

/// Whether `next` is printed on the line `prev` began, to its right (the
/// rows of a view are cut at wide gaps: a table's cells).
fn continues_printed_line(prev: &Line, next: &Line) -> bool {
    docintel_schema::rows::on_one_row(prev, next) && prev.bbox.x1 <= next.bbox.x0
}

/// Whether `next` goes on with a sentence `prev` left open: `prev` ends
/// without a sentence or label end (no `.`, `:`, `;`, `?`, `!`) on a word in
/// lower case or a comma, and `next` opens with a number followed by a
/// word in lower case ("…including approximately / 400 categorized as
/// temporary."). A clause or item number opening a row is followed by a
/// capitalised title or a marker ("2 Day Care Treatment", "3) The…"), and
/// the row before it closes its own sentence.
fn wraps_sentence(prev: &Line, next: &Line) -> bool {
    let open = prev.text.trim_end().chars().last().is_some_and(|c| c.is_lowercase() || c == ',');
    let rest = next.text.trim_start().trim_start_matches(|c: char| c.is_ascii_digit() || c == ',' || c == '.');
    let lowercase_after = rest.len() < next.text.trim_start().len()
        && rest.starts_with(' ')
        && rest.trim_start().chars().next().is_some_and(char::is_lowercase);
    open && lowercase_after
}

/// The numbers of a row that are not part of a date, the row's clause
/// number nor a footnote mark.
fn numbers(text: &str, ctx: &FindContext) -> Vec<crate::extract::number::NumberToken> {
    let dates = crate::extract::date::find_dates(text, ctx.order);
    crate::extract::number::find_numbers(text)
        .into_iter()
        .filter(|t| !dates.iter().any(|d| t.start < d.end && d.start < t.end))
        .filter(|t| ctx.mid_line || !t.opens_as_label(text))
        .filter(|t| !crate::extract::number::is_footnote_mark(text, t.start, t.end))
        .filter(|t| !names_a_part(text, t.start))
        .collect()
}

/// Words that a number after them names rather than counts: "Fig. 3",
/// "Table 2", "Section 4", "Article 12", "page 36".
const PART_NOUNS: &[&str] = &[
    "fig",
    "figure",
    "figures",
    "table",
    "tables",
    "tab",
    "section",
    "sections",
    "sec",
    "chapter",
    "article",
    "articles",
    "item",
    "note",
    "notes",
    "page",
    "pages",
    "p",
    "pp",
    "appendix",
    "exhibit",
    "schedule",
    "annex",
    "part",
    "clause",
    "step",
    "paragraph",
    "para",
    "tableau",
    "annexe",
    "chapitre",
    "abbildung",
    "tabelle",
    "abschnitt",
    "anhang",
];

/// Whether the number at `start` of `text` names a part of the document
/// ("Fig. 3. Steps for creating a Profile" is no count of 3).
fn names_a_part(text: &str, start: usize) -> bool {
    let before = text[..start].trim_end();
    let before = before.strip_suffix('.').unwrap_or(before).trim_end();
    let word: String =
        before.chars().rev().take_while(|c| c.is_alphabetic()).collect::<Vec<_>>().into_iter().rev().collect();
    !word.is_empty() && PART_NOUNS.contains(&word.to_lowercase().as_str())
}

/// Label cues of a kind, from the folded texts of a value's row and labels:
/// `(positive, negative)`, each in [0, 1].
pub(crate) fn cues(kind: Kind, labels: &[(String, bool)], amount: &AmountIntent, date: &DateIntent) -> (f64, f64) {
    match kind {
        Kind::Amount => amount::cues(labels, amount),
        Kind::Date => date::cues(labels, date),
        _ => (0.0, 0.0),
    }
}

#[cfg(test)]
mod tests {
    use docintel_schema::{BBox, Line};

    use super::{FindContext, Kind, find, names_a_part};

    #[test]
    fn a_number_opening_a_cell_after_its_row_label_is_a_value() {
        let line = |id: u32, text: &str, x0: f32, x1: f32| Line {
            line_id: id,
            page: 23,
            line_in_page: id,
            text: text.to_owned(),
            bbox: BBox { x0, y0: 507.8, x1, y1: 516.8 },
        };
        let name = line(1, "Joseph J. Wolk", 17.3, 71.3);
        let cell = line(2, "56 Member, Executive Committee; Chief Financial Officer", 222.5, 541.7);
        let ctx = FindContext::with_focus(&["age"]);
        let values = |rows: &[&Line]| {
            find(Kind::Number, rows, rows.len() - 1, &ctx).into_iter().map(|f| f.text).collect::<Vec<_>>()
        };
        assert_eq!(values(&[&name, &cell]), ["56"]);
        // Opening a line of its own, it numbers the clause.
        assert!(values(&[&cell]).is_empty());
        let label = line(3, "Total revenue", 17.3, 71.3);
        let figure = line(4, "39,117 Growth 7%", 222.5, 541.7);
        let amounts = |rows: &[&Line]| {
            find(Kind::Amount, rows, rows.len() - 1, &ctx).into_iter().map(|f| f.text).collect::<Vec<_>>()
        };
        assert_eq!(amounts(&[&label, &figure]), ["39,117"]);
        assert!(amounts(&[&figure]).is_empty());
    }

    #[test]
    fn a_number_opening_a_row_that_goes_on_with_a_sentence_is_a_value() {
        let line = |id: u32, text: &str, y0: f32| Line {
            line_id: id,
            page: 4,
            line_in_page: id,
            text: text.to_owned(),
            bbox: BBox { x0: 36.0, y0, x1: 560.0, y1: y0 + 9.0 },
        };
        let ctx = FindContext::with_focus(&["temporary"]);
        let counts = |rows: &[&Line]| {
            find(Kind::Count, rows, rows.len() - 1, &ctx).into_iter().map(|f| f.text).collect::<Vec<_>>()
        };
        let open = line(1, "Of these employees, approximately 3,500 were full-time, including approximately", 100.0);
        let wrapped = line(2, "400 categorized as temporary.", 111.0);
        assert_eq!(counts(&[&open, &wrapped]), ["400"]);
        // After a closed sentence, or before a capitalised title, the
        // number opening the row numbers an item.
        let closed = line(3, "The plan covers the following benefits.", 100.0);
        let item = line(4, "3 the insurer pays the claim", 111.0);
        assert!(counts(&[&closed, &item]).is_empty());
        let title = line(5, "2 Day Care Treatment", 111.0);
        assert!(counts(&[&open, &title]).is_empty());
    }

    #[test]
    fn a_number_after_a_part_noun_names_the_part() {
        let at = |text: &str, number: &str| names_a_part(text, text.find(number).expect("the number"));
        assert!(at("Fig. 3. Steps for creating a Profile", "3"));
        assert!(at("as shown in Table 2, the", "2"));
        assert!(at("see page 36", "36"));
        assert!(!at("we use 8 parallel attention layers", "8"));
        assert!(!at("3 steps describe the Profile", "3"));
        assert!(!at("Tables: 12", "12"), "a label and its count");
    }
}
