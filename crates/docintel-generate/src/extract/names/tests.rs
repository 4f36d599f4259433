//! The name finders on real lines: people, organisations and places, and
//! what each must not take for a name.

use super::*;

#[test]
fn a_form_label_names_a_one_word_person() {
    let names = find_people("Guest Name: Sanjay");
    let name = names.iter().find(|t| t.value == "Sanjay").expect("the labelled name");
    assert_eq!(&"Guest Name: Sanjay"[name.start..name.end], "Sanjay");
    assert!(find_people("Rooms: Deluxe suite with view").is_empty());
    assert!(find_people("Sanjay").is_empty());
    assert!(find_people("This is a sentence: Note").len() <= 1);
    assert!(find_people("A long label of many words here: Sanjay").is_empty());
}

fn values(tokens: Vec<NameToken>) -> Vec<(String, f64)> {
    tokens.into_iter().map(|t| (t.value, t.fit)).collect()
}

#[test]
fn people() {
    let line = "Mark G. Parker , Chairman, President and Chief Executive Officer — Mr. Parker, 63, was appointed";
    assert_eq!(values(find_people(line)), [("Mark G. Parker".to_owned(), 1.0), ("Parker".to_owned(), 0.8)]);
    assert_eq!(values(find_people("Leo    Leopard")), [("Leo    Leopard".to_owned(), 1.0)]);
    assert!(find_people("Chief Executive Officer").is_empty());
    assert!(find_people("Digital Media business").is_empty());
    // Initials written together, after an honorific or glued to it.
    assert_eq!(values(find_people("Company Secretary Mr. S.V. Shanbhag")), [("S.V. Shanbhag".to_owned(), 0.8)]);
    assert_eq!(
        values(find_people("Mr.R.A.Shah, Mr. Lalit Bhasin")),
        [("Mr.R.A.Shah".to_owned(), 0.8), ("Lalit Bhasin".to_owned(), 0.8)]
    );
    assert!(find_people("Mr.Chairman").is_empty());
}

#[test]
fn a_signature_block_names_its_signer() {
    let people = |line: &str| values(find_people(line));
    assert_eq!(people("By: /s/ JAMES R. LUSSIOR"), [("JAMES R. LUSSIOR".to_owned(), 1.0)]);
    // Two blocks side by side; initials open a name after its label.
    assert_eq!(
        people("NAME: S.K. Vereschagin NAME: Jeff Yelton"),
        [("S.K. Vereschagin".to_owned(), 1.0), ("Jeff Yelton".to_owned(), 1.0)]
    );
    assert_eq!(people("BY: /s/ S.K. Vereschagin BY: /s/ Jeffry E. Yelton")[0], ("S.K. Vereschagin".to_owned(), 1.0));
    // A label's value in lower case or a lone word is no signer.
    assert!(people("Name: to be agreed").is_empty());
    assert!(!people("Name: Santa").iter().any(|(_, fit)| *fit == 1.0));
}

#[test]
fn organisations() {
    assert_eq!(
        values(find_organisations("University of La Verne, La Verne, CA"))[0],
        ("University of La Verne".to_owned(), 1.0)
    );
    assert_eq!(
        values(find_organisations("Sold by: WS Retail Services Pvt. Ltd."))[0],
        ("WS Retail Services Pvt. Ltd.".to_owned(), 1.0)
    );
    let nasdaq = find_organisations("Our common stock is traded on The NASDAQ Global Select Market under");
    assert_eq!(nasdaq[0].value, "The NASDAQ Global Select Market");
    assert_eq!(find_organisations("NIKE, Inc. is")[0].value, "NIKE, Inc.");
    // Contract prose: a description, a shouted heading and a lowercase
    // "as" are no names; the defined party is.
    let line = "WHEREAS, Equifax Inc., a Georgia corporation, and the Agent as defined below. If Company fails";
    let names: Vec<String> = find_organisations(line).into_iter().map(|t| t.value).collect();
    assert_eq!(names, vec!["Equifax Inc."]);
    assert_eq!(values(find_organisations("filed with the SEC")), vec![("SEC".to_owned(), 0.5)]);
}

#[test]
fn places() {
    assert_eq!(
        values(find_places("PricewaterhouseCoopers LLP Portland, Oregon July 23, 2019"))[0],
        ("Portland, Oregon".to_owned(), 1.0)
    );
    assert_eq!(
        find_places("25,Vembuliamman Koil Street,, Pazhavanthangal, Chennai")[0].value,
        "Pazhavanthangal, Chennai"
    );
    assert_eq!(find_places("La Verne, CA")[0].value, "La Verne, CA");
    assert_eq!(find_places("sales in the United States grew")[0].value, "United States");
}
