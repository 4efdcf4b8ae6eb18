//! The texts participants read: complete sets in every language, placeholders kept, and a
//! study's overrides checked like the rest of its config.

use std::collections::BTreeMap;

use clozelab::game::design::participant_texts::{
    LANGUAGES, ParticipantTexts, Say, TextPart, TextsError, built_in, parts, placeholders,
};
use clozelab::game::design::study::{StudyConfig, StudyError};

#[test]
fn every_language_has_every_text_with_the_same_placeholders() {
    let english = built_in("en").expect("the English set parses");
    let names: Vec<&str> = Say::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(
        english.keys().map(String::as_str).collect::<Vec<_>>(),
        {
            let mut sorted = names.clone();
            sorted.sort();
            sorted
        },
        "the English set names exactly the texts the app shows"
    );
    for (language, _) in LANGUAGES {
        let set = built_in(language).unwrap_or_else(|| panic!("{language} parses"));
        assert_eq!(
            set.keys().collect::<Vec<_>>(),
            english.keys().collect::<Vec<_>>(),
            "{language}"
        );
        for (name, text) in &set {
            assert!(!text.trim().is_empty(), "{language}.{name} is empty");
            assert_eq!(
                placeholders(text),
                placeholders(&english[name]),
                "{language}.{name}"
            );
        }
        if language != "en" {
            // A set copied from English and left untranslated would pass the checks above.
            let same = set.iter().filter(|(n, t)| english[*n] == **t).count();
            assert!(
                same * 10 < set.len(),
                "{language}: {same} of {} texts are the English ones",
                set.len()
            );
        }
    }
}

#[test]
fn texts_are_filled_and_cut_at_their_placeholders() {
    let german = ParticipantTexts::new(Some("de"), &BTreeMap::new()).unwrap();
    assert_eq!(german.language(), "de");
    assert_eq!(german.get(Say::Withdraw), "Von der Studie zurücktreten");
    assert_eq!(
        german.fill(Say::NotAllSaved, &[("saved", "3"), ("total", "8")]),
        "Nur 3 von 8 Antworten sind gespeichert: Laden Sie sie unten herunter, bevor Sie gehen."
    );
    assert_eq!(
        parts("a {x} b {y}"),
        [
            TextPart::Text("a "),
            TextPart::Slot("x"),
            TextPart::Text(" b "),
            TextPart::Slot("y")
        ]
    );
    // Braces that are not a placeholder stay text.
    assert_eq!(
        parts("{ x } {"),
        [TextPart::Text("{"), TextPart::Text(" x } {")]
    );
    assert_eq!(
        ParticipantTexts::default().get(Say::ConsentAgree),
        "I agree — start"
    );
}

#[test]
fn a_study_names_its_language_and_replaces_texts_it_may() {
    let config = StudyConfig::from_json(
        r#"{"language": "nl", "participant_texts": {"consent_agree": "Ja, ik doe mee",
            "progress_words": "{done}/{total} woorden"}}"#,
    )
    .unwrap();
    let texts = config.participant_texts();
    assert_eq!(texts.get(Say::ConsentAgree), "Ja, ik doe mee");
    assert_eq!(texts.get(Say::ConsentDecline), "Ik ga niet akkoord");
    assert_eq!(
        texts.fill(Say::ProgressWords, &[("done", "1"), ("total", "2")]),
        "1/2 woorden"
    );
    assert_eq!(
        StudyConfig::from_json(r#"{"language": "fr"}"#),
        Err(StudyError::Texts(TextsError::Language("fr".into())))
    );
    assert_eq!(
        StudyConfig::from_json(r#"{"participant_texts": {"consent_agre": "Yes"}}"#),
        Err(StudyError::Texts(TextsError::UnknownName(
            "consent_agre".into()
        )))
    );
    assert_eq!(
        StudyConfig::from_json(r#"{"participant_texts": {"progress_words": "{done} done"}}"#),
        Err(StudyError::Texts(TextsError::Placeholders {
            name: "progress_words".into(),
            expected: "{done}, {total}".into()
        }))
    );
    assert_eq!(
        StudyConfig::default_play().participant_texts(),
        ParticipantTexts::english()
    );
}
