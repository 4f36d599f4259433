//! The kind of value a question asks for, as a pattern over raw line text:
//! a currency-looking token for amounts, a date for dates, an email or URL
//! for contacts, a labelled or international number for telephones. The search boosts lines carrying one and reaches down to
//! one; the coverage check asks that some passage shown carries one.

use docintel_schema::ValueKind;
use regex::Regex;

/// Tokens that look like what an answer of this kind needs: a currency-looking
/// token for amounts, a date for dates, an email or URL for contacts.
pub(crate) fn kind_pattern(answer_type: &str) -> Option<(&'static str, Regex)> {
    let (name, pattern) = match (ValueKind::for_answer_type(answer_type), answer_type) {
        (ValueKind::Amount, _) => {
            ("amount", r"(?i)([$€£₹]|\b(usd|eur|gbp|inr|pln|chf|rs\.?|euros?|dollars?)\b)|\d[.,]\d{2}\b")
        }
        (ValueKind::Date, _) => (
            "date",
            r"(?i)\b\d{1,4}[-/.]\d{1,2}[-/.]\d{2,4}\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|janv|févr|mars|avr|mai|juin|juil|août|sept|déc|januar|februar|märz|mai|juni|juli|oktober|dezember|maart|mei|okt)[a-zé]*\.?\s+\d{1,2}|\b\d{1,2}\.?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|janv|févr|mars|avr|mai|juin|juil|août|sept|déc|maart|mei|okt)[a-zéû]*\.?\s+\d{4}",
        ),
        // A number after a telephone label ("Tel: 01983 873655", "Fax
        // (212)", "Tél. 01 42") or in international form ("+44 20"): a bare
        // digit run is every table's, so the label or the `+` must be there.
        (_, "phone") => (
            "phone",
            r"(?i)\b(tel|tél|phone|telephone|téléphone|fax|mobile|cell|ph)\b\.?(\s*(no|n°|number)\.?)?\s*[:.]?\s*[+(]?\d|\+\d{1,3}[\s.-]?\(?\d{1,4}\)?[\s.-]?\d{2,}",
        ),
        (_, "email" | "url" | "website" | "contact") => {
            ("contact", r"(?i)[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}|\bhttps?://\S+|\bwww\.[a-z0-9-]+\.[a-z]{2,}")
        }
        _ => return None,
    };
    Some((name, Regex::new(pattern).expect("static pattern compiles")))
}

#[cfg(test)]
mod tests {
    use super::kind_pattern;

    #[test]
    fn a_phone_is_a_labelled_or_international_number_not_a_digit_run() {
        let (_, re) = kind_pattern("phone").expect("phone has a pattern");
        for line in ["Tel: 01983 873655", "Phone No. (212) 555-0100", "Tél. : 01 42 68 53 00", "call +44 20 7946 0958"]
        {
            assert!(re.is_match(line), "{line}");
        }
        for line in ["2019 2018 2017", "Telephone support is available", "Total 1 234 567"] {
            assert!(!re.is_match(line), "{line}");
        }
    }
}
