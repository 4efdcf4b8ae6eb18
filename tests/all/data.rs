//! Import/export of cloze data: round trips, clear errors, hostile text kept verbatim.

use crate::common;
use clozelab::data::provo::{ContextKey, ProvoContext};

use clozelab::data::*;

const OSF_SAMPLE: &str = "Word_Unique_ID,Text_ID,Text,Word_Number,Word,Response,Response_Count,Total_Response_Count\n\
1_1_2,1,\"There are now, rumblings\",2,are,are,16,40\n\
1_1_2,1,\"There are now, rumblings\",2,are,is,9,40\n\
1_1_2,1,\"There are now, rumblings\",2,are,,0,40\n\
1_1_3,1,\"There are now, rumblings\",3,now,many,20,40\n\
1_1_3,1,\"There are now, rumblings\",3,now,\"<img src=x onerror=alert(1)>\",1,40\n";

#[test]
fn provo_osf_csv_imports_and_round_trips() {
    let (norms, skipped) = import_provo_norms("norms.csv", OSF_SAMPLE).unwrap();
    assert_eq!(
        skipped,
        vec![SkippedRow {
            line: 4,
            reason: "empty response".into()
        }]
    );
    assert_eq!(norms.contexts[&ContextKey::new(1, 2)].human["are"], 16);
    assert_eq!(
        norms.contexts[&ContextKey::new(1, 3)].human["imgsrcxonerroralert1"],
        1,
        "hostile text is a word like any other, normalised"
    );
    assert_eq!(norms.contexts[&ContextKey::new(1, 3)].context, "There are");
    assert_eq!(norms.contexts[&ContextKey::new(1, 3)].original, "now");
    for delimiter in [Delimiter::Comma, Delimiter::Tab] {
        let exported = common::osf_norms_text(&norms, delimiter);
        let (again, skipped) = import_provo_norms("again", &exported).unwrap();
        assert!(skipped.is_empty());
        assert_eq!(again, norms, "{delimiter:?}");
    }
    // BOM + CRLF + reordered columns give the same norms.
    let crlf = format!("\u{feff}{}", OSF_SAMPLE.replace('\n', "\r\n"));
    assert_eq!(import_provo_norms("crlf.csv", &crlf).unwrap().0, norms);
    let reordered = common::osf_norms_text(&norms, Delimiter::Comma);
    let mut rows: Vec<Vec<String>> = reordered
        .lines()
        .map(|l| {
            parse_delimited("x", l, Delimiter::Comma)
                .unwrap()
                .remove(0)
                .1
        })
        .collect();
    for row in &mut rows {
        row.reverse();
    }
    let reversed: String = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|f| quote_field(f, Delimiter::Comma))
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    assert_eq!(
        import_provo_norms("reversed.csv", &reversed).unwrap().0,
        norms
    );
}

#[test]
fn malformed_files_name_file_line_and_column() {
    let missing = "Text_ID,Text,Word_Number,Word,Response\n1,a,2,b,c\n";
    assert!(matches!(
        import_provo_norms("m.csv", missing),
        Err(DataError::MissingColumn {
            column: "Response_Count",
            ..
        })
    ));
    let bad_number =
        "Text_ID,Text,Word_Number,Word,Response,Response_Count\n1,a,2,b,c,1\n1,a,two,b,c,1\n";
    let err = import_provo_norms("n.csv", bad_number).unwrap_err();
    assert_eq!(
        err,
        DataError::At {
            file: "n.csv".into(),
            line: 3,
            column: 3,
            message: "Word_Number \"two\" is not a valid number".into()
        }
    );
    assert!(err.to_string().starts_with("n.csv: line 3, column 3"));
    let unclosed = "Text_ID,Text\n1,\"never closed\n";
    assert!(matches!(
        import_provo_norms("q.csv", unclosed),
        Err(DataError::At {
            line: 2,
            column: 3,
            ..
        })
    ));
    let stray = "a,b\n1,x\"y\n";
    assert!(matches!(
        parse_delimited("s.csv", stray, Delimiter::Comma),
        Err(DataError::At {
            line: 2,
            column: 4,
            ..
        })
    ));
    let short = "Text_ID,Text,Word_Number,Word,Response,Response_Count\n1,a\n";
    assert!(matches!(
        import_provo_norms("short.csv", short),
        Err(DataError::At { line: 2, .. })
    ));
    assert!(import_provo_norms("empty.csv", "").is_err());
    assert!(
        import_long_json("bad.json", "[{\"participant\": 1}]")
            .unwrap_err()
            .to_string()
            .contains("bad.json: line 1")
    );
}

#[test]
fn long_format_round_trips_in_csv_and_json() {
    let records = vec![
        ResponseRecord {
            participant: "P1".into(),
            passage: "p-1".into(),
            position: 2,
            response: "don't".into(),
            response_time_ms: Some(1234.5),
            timestamp: "2026-11-22T05:00:00Z".into(),
            normalized: "dont".into(),
            first_keystroke_ms: Some(310.0),
            practice: false,
            run: String::new(),
        },
        ResponseRecord {
            participant: "P,2 \"quoted\"".into(),
            passage: "東京".into(),
            position: 3,
            response: "<img src=x onerror=alert(1)>".into(),
            response_time_ms: None,
            timestamp: "2026-11-22T05:00:01Z".into(),
            normalized: "imgsrcxonerroralert1".into(),
            first_keystroke_ms: None,
            practice: true,
            run: String::new(),
        },
        ResponseRecord {
            participant: "p3".into(),
            passage: "multi\nline".into(),
            position: 4,
            response: " padded 🚀 ".into(),
            response_time_ms: Some(0.0),
            timestamp: "t".into(),
            normalized: "padded".into(),
            first_keystroke_ms: Some(0.0),
            practice: false,
            run: String::new(),
        },
    ];
    for delimiter in [Delimiter::Comma, Delimiter::Tab] {
        let csv = export_long_csv(&records, delimiter);
        assert_eq!(
            import_long_csv("long.csv", &csv).unwrap(),
            records,
            "{delimiter:?}"
        );
    }
    assert_eq!(
        import_long_json("long.json", &export_long_json(&records)).unwrap(),
        records
    );
    // Files with only the six required columns still import; the normalised word is derived.
    let minimal =
        "participant,passage,position,response,response_time_ms,timestamp\nP,x,2,Don't,,t\n";
    let got = import_long_csv("min.csv", minimal).unwrap();
    assert_eq!(
        (
            got[0].normalized.as_str(),
            got[0].first_keystroke_ms,
            got[0].practice
        ),
        ("dont", None, false)
    );
}

#[test]
fn shared_norms_survive_the_osf_format() {
    let Some(shared) = common::shared_dir() else {
        eprintln!("SKIPPED: ../shared absent (needs ../shared/provo)");
        return;
    };
    let contexts = clozelab::data::provo::read_norms(&shared.join("provo")).unwrap();
    let mut norms = ClozeNorms::default();
    for c in &contexts {
        // The passage as far as its last context goes (contexts come in word order).
        norms
            .passages
            .insert(c.text_id, format!("{} {}", c.context, c.original));
        norms.contexts.insert(
            c.key(),
            ProvoContext {
                gpt2_logprob_human: None,
                gpt2_logprob_original: None,
                ..c.clone()
            },
        );
    }
    // The release carries "NaN" responses with count 0, and punctuation given as a response
    // ("?", "-----"), which is no word: both are imported as skipped rows, with reasons.
    let no_word = |w: &str| !w.chars().any(char::is_alphanumeric);
    let (zero_rows, punctuation_rows) =
        norms
            .contexts
            .values()
            .flat_map(|c| c.human.iter())
            .fold((0, 0), |(z, p), (w, n)| {
                (
                    z + usize::from(*n == 0),
                    p + usize::from(*n > 0 && no_word(w)),
                )
            });
    let (again, skipped) = import_provo_norms(
        "provo.csv",
        &common::osf_norms_text(&norms, Delimiter::Comma),
    )
    .unwrap();
    assert!(zero_rows > 0 && punctuation_rows > 0);
    assert_eq!(skipped.len(), zero_rows + punctuation_rows);
    let counted = |what: &str| skipped.iter().filter(|s| s.reason.contains(what)).count();
    assert_eq!(counted("count 0"), zero_rows, "{skipped:?}");
    assert_eq!(
        counted("no letter or digit"),
        punctuation_rows,
        "{skipped:?}"
    );
    // What comes back is each response normalised as a word (the release keeps "well-being"
    // whole; as a word it is "wellbeing"), counts of responses that normalise alike added.
    for c in norms.contexts.values_mut() {
        let mut words = std::collections::BTreeMap::new();
        for (w, n) in &c.human {
            if *n > 0 && !no_word(w) {
                *words
                    .entry(clozelab::text::words::normalize(w))
                    .or_insert(0) += n;
            }
        }
        c.human = words;
    }
    assert_eq!(again.contexts.len(), 2687);
    assert_eq!(again, norms);
}

#[test]
fn shared_jsonl_round_trips() {
    let Some(shared) = common::shared_dir() else {
        eprintln!("SKIPPED: ../shared absent (needs ../shared/provo)");
        return;
    };
    let text = std::fs::read_to_string(shared.join("provo/provo_cloze.jsonl")).unwrap();
    // The reader the Analysis page uses for a norms file (`Dataset::from_files`).
    let parse = clozelab::data::provo::parse_jsonl::<clozelab::data::provo::ProvoContext>;
    let contexts = parse("provo_cloze.jsonl", &text).unwrap();
    assert_eq!(contexts.len(), 2687);
    let written: String = contexts
        .iter()
        .map(|c| serde_json::to_string(c).unwrap() + "\n")
        .collect();
    let again = parse("again", &written).unwrap();
    assert_eq!(again, contexts);
    let broken = "{\"text_id\": 1}\n";
    let err = parse(
        "b.jsonl",
        &format!("{}{broken}", text.lines().next().unwrap().to_owned() + "\n"),
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("b.jsonl line 2"), "{err}");
}
