//! A study config as the Study page edits it: every field typed, turned into the JSON a
//! researcher would write (defaults left out, fields in alphabetical order) and checked by the same loader participants'
//! browsers run ([`StudyConfig::from_json`]), so the page shows exactly the loader's errors.

use std::collections::BTreeMap;

use serde_json::Value;

use super::attention::AttentionCheck;
use super::latin_square::LatinSquare;
use super::lists::PassageList;
use super::passages::{Passage, PassageError, built_in_passages, parse_plain_text};
use super::questions::{Question, QuestionKind};
use super::study::{StudyConfig, StudyError};

/// The config as tidy JSON: fields at their default (empty, `false`, `null`, `0`, fixed order,
/// the next-word game) are left out, so that what is left is what the researcher chose.
///
/// ```
/// use clozelab::game::{design::study::StudyConfig, design::study_draft::tidy_json};
/// let mut config = StudyConfig::default_play();
/// config.title = "Mine".into();
/// config.study_id = Some("s1".into());
/// config.passages = vec!["storm".into()];
/// assert_eq!(
///     tidy_json(&config),
///     "{\n  \"passages\": [\n    \"storm\"\n  ],\n  \"study_id\": \"s1\",\n  \"title\": \"Mine\"\n}"
/// );
/// ```
pub fn tidy_json(config: &StudyConfig) -> String {
    let mut value = serde_json::to_value(config).unwrap_or(Value::Null);
    if let Value::Object(fields) = &mut value {
        fields.retain(|name, v| match (name.as_str(), &*v) {
            (_, Value::Null) | (_, Value::Bool(false)) => false,
            (_, Value::String(s)) if s.is_empty() => false,
            (_, Value::Array(a)) if a.is_empty() => false,
            (_, Value::Object(o)) if o.is_empty() => false,
            ("seed", Value::Number(n)) => n.as_u64() != Some(0),
            ("order", Value::String(s)) => s != "fixed",
            ("game", Value::String(s)) => s != "next_word",
            _ => true,
        });
    }
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// Checks `config` as the config loader does; on success returns the JSON to save.
pub fn validated_json(config: &StudyConfig) -> Result<String, StudyError> {
    let json = tidy_json(config);
    StudyConfig::from_json(&json)?;
    Ok(json)
}

/// Every passage a study can name: its own (`texts`) first, then the built-in ones.
pub fn available_passages(config: &StudyConfig) -> Vec<Passage> {
    config
        .texts
        .iter()
        .cloned()
        .chain(built_in_passages())
        .collect()
}

/// Adds the researcher's passages from plain text (passages separated by blank lines, an
/// optional `# Title` line; see [`parse_plain_text`]), each with an id no other passage has,
/// and selects them; returns how many were added.
///
/// ```
/// use clozelab::game::{design::study::StudyConfig, design::study_draft::add_own_passages};
/// let mut config = StudyConfig::default_play();
/// assert_eq!(add_own_passages(&mut config, "# A\nOne two three.\n\nFour five six.").unwrap(), 2);
/// assert_eq!(add_own_passages(&mut config, "Seven eight nine.").unwrap(), 1);
/// assert_eq!(config.passages, ["p1", "p2", "p3"]);
/// ```
pub fn add_own_passages(config: &mut StudyConfig, text: &str) -> Result<usize, PassageError> {
    let added = parse_plain_text(text)?;
    let taken =
        |id: &str, config: &StudyConfig| available_passages(config).iter().any(|p| p.id == id);
    let mut next = 1;
    for mut passage in added.iter().cloned() {
        while taken(&format!("p{next}"), config) {
            next += 1;
        }
        passage.id = format!("p{next}");
        config.passages.push(passage.id.clone());
        config.texts.push(passage);
    }
    Ok(added.len())
}

/// Removes one of the researcher's own passages, and every mention of it.
pub fn remove_own_passage(config: &mut StudyConfig, id: &str) {
    config.texts.retain(|p| p.id != id);
    config.passages.retain(|p| p != id);
    if config.practice.as_deref() == Some(id) {
        config.practice = None;
    }
}

/// The passages the study plays from: those named, or, when none are, all of its own
/// passages, else all built-in ones (as the loader reads an empty list).
pub fn selected_ids(config: &StudyConfig) -> Vec<String> {
    if !config.passages.is_empty() {
        return config.passages.clone();
    }
    let implied = if config.texts.is_empty() {
        built_in_passages()
    } else {
        config.texts.clone()
    };
    implied.into_iter().map(|p| p.id).collect()
}

/// Selects or unselects a passage for the study (unselecting every one means all again).
///
/// ```
/// use clozelab::game::{design::study::StudyConfig, design::study_draft::{selected_ids, set_selected}};
/// let mut config = StudyConfig::default_play();
/// assert_eq!(selected_ids(&config).len(), 10);
/// set_selected(&mut config, "storm", false);
/// assert_eq!(config.passages.len(), 9);
/// set_selected(&mut config, "storm", true);
/// assert_eq!(config.passages.last().map(String::as_str), Some("storm"));
/// ```
pub fn set_selected(config: &mut StudyConfig, id: &str, selected: bool) {
    let mut ids = selected_ids(config);
    ids.retain(|p| p != id);
    if selected {
        ids.push(id.to_string());
    }
    config.passages = ids;
}

/// A number field's text as an optional count: empty means "not set"; anything else must be a
/// whole number.
///
/// ```
/// use clozelab::game::design::study_draft::optional_count;
/// assert_eq!(optional_count::<usize>(" "), Ok(None));
/// assert_eq!(optional_count::<usize>("12"), Ok(Some(12)));
/// assert!(optional_count::<usize>("1.5").is_err());
/// ```
pub fn optional_count<T: std::str::FromStr>(text: &str) -> Result<Option<T>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse()
        .map(Some)
        .map_err(|_| format!("{text:?} is not a whole number"))
}

/// The study's lists as the Study page shows them: one per line, `name: id, id, …`.
///
/// ```
/// use clozelab::game::design::study_draft::{lists_text, parse_lists};
/// let lists = parse_lists("A: storm, bees\n\nB: letter,river\n").unwrap();
/// assert_eq!(lists[1].passages, ["letter", "river"]);
/// assert_eq!(lists_text(&lists), "A: storm, bees\nB: letter, river");
/// assert!(parse_lists("storm, bees").is_err());
/// ```
pub fn lists_text(lists: &[PassageList]) -> String {
    lists
        .iter()
        .map(|l| format!("{}: {}", l.name, l.passages.join(", ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The non-empty, trimmed items of a comma-separated text.
fn comma_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Reads one item per non-blank line as `head: rest`; a line `item` refuses is named with the
/// `form` it should have.
fn parse_lines<T, C: FromIterator<T>>(
    text: &str,
    form: &str,
    item: impl Fn(&str, &str) -> Option<T>,
) -> Result<C, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            line.split_once(':')
                .and_then(|(head, rest)| item(head.trim(), rest.trim()))
                .ok_or_else(|| format!("line {}: write it as \"{form}\"", i + 1))
        })
        .collect()
}

/// Reads lists written as [`lists_text`] writes them (blank lines skipped).
pub fn parse_lists(text: &str) -> Result<Vec<PassageList>, String> {
    parse_lines(text, "name: id, id, …", |name, ids| {
        Some(PassageList {
            name: name.to_string(),
            passages: comma_list(ids),
        })
    })
}

/// Attention checks one per line, `passage, after, answer: instruction`.
///
/// ```
/// use clozelab::game::design::study_draft::{checks_text, parse_checks};
/// let checks = parse_checks("storm, 3, purple: Type the word purple.\n").unwrap();
/// assert_eq!((checks[0].after, checks[0].answer.as_str()), (3, "purple"));
/// assert_eq!(checks_text(&checks), "storm, 3, purple: Type the word purple.");
/// assert!(parse_checks("storm, three, purple: Type purple.").is_err());
/// assert!(parse_checks("storm: Type purple.").is_err());
/// ```
pub fn checks_text(checks: &[AttentionCheck]) -> String {
    checks
        .iter()
        .map(|c| {
            format!(
                "{}, {}, {}: {}",
                c.passage, c.after, c.answer, c.instruction
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads checks written as [`checks_text`] writes them (blank lines skipped).
pub fn parse_checks(text: &str) -> Result<Vec<AttentionCheck>, String> {
    let form = "passage id, answers before it, answer: instruction";
    parse_lines(text, form, |head, instruction| {
        let parts: Vec<&str> = head.split(',').map(str::trim).collect();
        let [passage, after, answer] = parts[..] else {
            return None;
        };
        Some(AttentionCheck {
            id: String::new(),
            passage: passage.to_string(),
            after: after.parse().ok()?,
            instruction: instruction.to_string(),
            answer: answer.to_string(),
        })
    })
}

/// Replaced participant texts one per line, `name: text`.
///
/// ```
/// use clozelab::game::design::study_draft::{overrides_text, parse_overrides};
/// let texts = parse_overrides("withdraw: Stop\n\nfinished: Done: thanks!").unwrap();
/// assert_eq!(texts["finished"], "Done: thanks!");
/// assert_eq!(overrides_text(&texts), "finished: Done: thanks!\nwithdraw: Stop");
/// assert!(parse_overrides("no colon here").is_err());
/// ```
pub fn overrides_text(texts: &BTreeMap<String, String>) -> String {
    texts
        .iter()
        .map(|(name, text)| format!("{name}: {text}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads replaced texts written as [`overrides_text`] writes them (blank lines skipped).
pub fn parse_overrides(text: &str) -> Result<BTreeMap<String, String>, String> {
    parse_lines(text, "name: text", |name, text| {
        Some((name.to_string(), text.to_string()))
    })
}

/// The Study page's two fields of a Latin square: its conditions (`high, low`) and its items,
/// one per line, each the passage ids of its conditions in order (`a_high, a_low`).
///
/// ```
/// use clozelab::game::design::study_draft::{parse_square, square_texts};
/// let square = parse_square("high, low", "a1, a2\nb1, b2\n").unwrap().unwrap();
/// assert_eq!(square.items[1], ["b1", "b2"]);
/// assert_eq!(square_texts(Some(&square)), ("high, low".into(), "a1, a2\nb1, b2".into()));
/// assert_eq!(parse_square(" ", ""), Ok(None));
/// assert!(parse_square("", "a1, a2").is_err());
/// ```
pub fn square_texts(square: Option<&LatinSquare>) -> (String, String) {
    square.map_or_else(Default::default, |s| {
        let items: Vec<String> = s.items.iter().map(|item| item.join(", ")).collect();
        (s.conditions.join(", "), items.join("\n"))
    })
}

/// See [`square_texts`]; `None` when both fields are empty.
pub fn parse_square(conditions: &str, items: &str) -> Result<Option<LatinSquare>, String> {
    let conditions = comma_list(conditions);
    let items: Vec<Vec<String>> = items
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(comma_list)
        .collect();
    match (conditions.is_empty(), items.is_empty()) {
        (true, true) => Ok(None),
        (true, false) => Err("name the conditions first (e.g. \"high, low\")".into()),
        _ => Ok(Some(LatinSquare { conditions, items })),
    }
}

/// Sets the study's Latin square and the lists it rotates into; a square that cannot be
/// rotated leaves no lists, and the loader says why.
pub fn set_latin_square(config: &mut StudyConfig, square: Option<LatinSquare>) {
    if let Some(square) = &square {
        config.lists = square.lists().unwrap_or_default();
    } else if config.latin_square.is_some() {
        config.lists.clear();
    }
    config.latin_square = square;
}

/// Adds the built-in question `name` (see [`super::questions::built_in`]) in the study's
/// language, before the passages or (did you look anything up) after them; `Err` when the study
/// already asks a question of that id.
///
/// ```
/// use clozelab::game::{design::study::StudyConfig, design::study_draft::add_built_in_question};
/// let mut config = StudyConfig::default_play();
/// add_built_in_question(&mut config, "native_speaker").unwrap();
/// add_built_in_question(&mut config, "looked_up").unwrap();
/// assert_eq!((config.questions_before.len(), config.questions_after.len()), (1, 1));
/// assert!(add_built_in_question(&mut config, "looked_up").is_err());
/// ```
pub fn add_built_in_question(config: &mut StudyConfig, name: &str) -> Result<(), String> {
    let language = config.language.clone().unwrap_or_else(|| "en".into());
    let question = super::questions::built_in(name, &language)
        .ok_or_else(|| format!("there is no built-in question {name:?}"))?;
    add_question(config, question, name != "looked_up")
}

/// Adds `question` before the passages (`before`) or after them; `Err` when the study already
/// asks a question of that id.
pub fn add_question(
    config: &mut StudyConfig,
    question: Question,
    before: bool,
) -> Result<(), String> {
    let taken = config
        .questions_before
        .iter()
        .chain(&config.questions_after)
        .any(|q| q.id == question.id);
    if taken {
        return Err(format!(
            "the study already asks a question {:?}",
            question.id
        ));
    }
    if before {
        config.questions_before.push(question);
    } else {
        config.questions_after.push(question);
    }
    Ok(())
}

/// A question of the researcher's own from the Study page's fields: `options` and
/// `screen_out` comma-separated, `range` as `min-max` (either side may be empty).
///
/// ```
/// use clozelab::game::design::questions::QuestionKind;
/// use clozelab::game::design::study_draft::own_question;
/// let q = own_question("handedness", "Which hand do you write with?", QuestionKind::SingleChoice,
///     "left, right, both", "", "", true).unwrap();
/// assert_eq!(q.options, ["left", "right", "both"]);
/// let age = own_question("age", "Age?", QuestionKind::Number, "", "", "18-99", true).unwrap();
/// assert_eq!((age.min, age.max), (Some(18.0), Some(99.0)));
/// assert!(own_question("x", "X?", QuestionKind::Number, "", "", "old", true).is_err());
/// ```
pub fn own_question(
    id: &str,
    text: &str,
    kind: QuestionKind,
    options: &str,
    screen_out: &str,
    range: &str,
    required: bool,
) -> Result<Question, String> {
    let bound = |s: &str| -> Result<Option<f64>, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        s.parse()
            .map(Some)
            .map_err(|_| format!("the range must be written \"min-max\" in numbers, got {range:?}"))
    };
    let (min, max) = match range.trim().split_once('-') {
        Some((lo, hi)) => (bound(lo)?, bound(hi)?),
        None => (bound(range)?, None),
    };
    Ok(Question {
        id: id.trim().to_string(),
        text: text.trim().to_string(),
        kind,
        options: comma_list(options),
        min,
        max,
        points: None,
        required,
        screen_out: comma_list(screen_out),
    })
}

/// The Study page's adaptive norming fields as typed: `enabled`, the interval width and unseen
/// mass bounds (empty: no bound), the share of contexts in percent (empty: all) and the full
/// URL (empty: none). Sets or clears the config's section; `Err` names a field that is not a
/// number (the bounds themselves are checked with the rest of the config).
///
/// ```
/// use clozelab::game::design::study::StudyConfig;
/// use clozelab::game::design::study_draft::set_adaptive_norming;
/// let mut config = StudyConfig::default_play();
/// set_adaptive_norming(&mut config, true, "0.3", "", "90", "").unwrap();
/// let section = config.adaptive_norming.clone().unwrap();
/// assert_eq!((section.max_interval_width, section.share), (Some(0.3), 0.9));
/// assert!(set_adaptive_norming(&mut config, true, "wide", "", "", "").unwrap_err().contains("wide"));
/// set_adaptive_norming(&mut config, false, "0.3", "", "", "").unwrap();
/// assert!(config.adaptive_norming.is_none());
/// ```
pub fn set_adaptive_norming(
    config: &mut StudyConfig,
    enabled: bool,
    width: &str,
    unseen: &str,
    share_percent: &str,
    full_url: &str,
) -> Result<(), String> {
    if !enabled {
        config.adaptive_norming = None;
        return Ok(());
    }
    let number = |text: &str, what: &str| -> Result<Option<f64>, String> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        text.parse::<f64>()
            .map(Some)
            .map_err(|_| format!("{what} must be a number, got {text:?}"))
    };
    let prior = config
        .adaptive_norming
        .as_ref()
        .map(|n| n.prior.clone())
        .unwrap_or_default();
    config.adaptive_norming = Some(super::adaptive_norming::AdaptiveNorming {
        max_interval_width: number(width, "the interval width")?,
        max_unseen_mass: number(unseen, "the unseen mass")?,
        share: number(share_percent, "the share of contexts")?.map_or(1.0, |p| p / 100.0),
        prior,
        full_url: Some(full_url.trim().to_string()).filter(|u| !u.is_empty()),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_page_saves_loads_back_the_same() {
        let mut config = StudyConfig::default_play();
        config.title = "Token study".into();
        config.game = crate::game::design::study::GameKind::TwoToken;
        config.seed = 7;
        config.rounds_per_position = Some(4);
        config.submit_url = Some("/submit".into());
        add_own_passages(&mut config, "# Mine\nA passage of my own here.").unwrap();
        let json = validated_json(&config).unwrap();
        assert!(!json.contains("null") && !json.contains("false"));
        assert_eq!(StudyConfig::from_json(&json).unwrap(), config);
    }

    #[test]
    fn the_page_shows_the_loaders_errors() {
        let mut config = StudyConfig::default_play();
        config.send_each_response = true;
        assert_eq!(
            validated_json(&config),
            Err(StudyError::SendEachWithoutSubmit)
        );
        config.send_each_response = false;
        config.passages_per_participant = Some(99);
        assert!(matches!(
            validated_json(&config),
            Err(StudyError::PassageCount { got: 99, .. })
        ));
        config.passages_per_participant = None;
        add_own_passages(&mut config, "One two three.").unwrap();
        config.practice = Some("p1".into());
        remove_own_passage(&mut config, "p1");
        assert_eq!(config.practice, None);
        assert!(validated_json(&config).is_ok());
    }
}
