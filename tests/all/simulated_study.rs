//! A simulated study, hundreds of times over, hunting the silent errors a single example
//! misses. Each case draws a design (plain passages, lists, a Latin square with or without
//! fillers shared by every list, a practice passage, a question that screens out) for a pilot
//! and a main study whose passages share their ids, some with other texts (one named like a
//! built-in passage); simulated participants then run it as the product does — inside JATOS,
//! their list claimed through the batch session — and complete, reload (their answers sent
//! again), withdraw, are screened out, leave before the first word, are JATOS test runs or the
//! researcher's preview, or have a lab computer's long-format download of their run too. Their
//! files are read back as `clozelab results` reads them, into the exported tables.
//!
//! The invariants: every answer once, with its own study's context, target word and text id;
//! nothing of one study in another's rows; every run in `runs.csv` in the state it ended in;
//! the flow's counts adding up to the runs; lists balanced within one over the analysed
//! participants; `norms.csv` holding exactly the analysed answers. Two planted faults — answers
//! merged by bare passage id, JATOS test runs taking list places — must make the checks fail.

use std::collections::{BTreeMap, BTreeSet};

use clozelab::analysis::dataset::{Dataset, DatasetError};
use clozelab::analysis::passage_texts::{PassageTexts, own_text_id};
use clozelab::data::{Delimiter, ResponseRecord, export_long_csv, import_provo_norms};
use clozelab::game::design::jatos_run::JatosRun;
use clozelab::game::design::questions::QuestionAnswer;
use clozelab::game::design::study::StudyConfig;
use clozelab::game::readback::exclusions::{ExclusionRules, decide};
use clozelab::game::readback::results::{StudyResults, is_study_answers};
use clozelab::game::readback::results_dataset::dataset_from_files;
use clozelab::game::readback::trial_table::{StudyTables, study_tables};
use clozelab::game::run::export::{ExportKind, Manifest, ModelInfo, RunDetails};
use clozelab::game::run::jatos_batch::{LedgerState, ListClaim, batch_list_claim, ledger_channel};
use clozelab::game::run::withdrawal::WithdrawalNotice;
use clozelab::rng::SplitMix64;
use serde_json::json;

use crate::jatos_batch::Batch;

/// The cases the test command runs.
const CASES: u64 = 500;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    /// Answers placed by passage id alone, the first text of an id standing for all.
    BareIdMerge,
    /// JATOS's test runs claiming (and completing) list places in the batch.
    TestRunsInLedger,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Behaviour {
    Complete,
    Reload,
    Withdraw,
    ScreenOut,
    LeftBeforeFirstWord,
    TestRun,
    Preview,
    LabDownload,
}

const BEHAVIOURS: [Behaviour; 8] = [
    Behaviour::Complete,
    Behaviour::Reload,
    Behaviour::Withdraw,
    Behaviour::ScreenOut,
    Behaviour::LeftBeforeFirstWord,
    Behaviour::TestRun,
    Behaviour::Preview,
    Behaviour::LabDownload,
];

fn below(rng: &mut SplitMix64, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

/// One answer the simulation gave, as the tables must show it.
#[derive(Clone, Debug)]
struct Given {
    study: usize,
    response: String,
    context: String,
    target: String,
    text_id: u32,
    practice: bool,
}

/// A run as the simulation played it.
#[derive(Clone, Debug)]
struct Played {
    study: usize,
    behaviour: Behaviour,
    list: Option<String>,
}

/// Everything one case made, and what the tables must say of it.
struct Case {
    files: Vec<(String, String)>,
    /// (participant, run, passage, position) → the answer; every run not withdrawn.
    given: BTreeMap<(String, String, String, u32), Given>,
    /// (participant, run) → how it was played.
    runs: BTreeMap<(String, String), Played>,
    /// Each study's configs (their passages' texts, for the planted bare-id merge).
    configs: Vec<StudyConfig>,
    /// Whether the design has lists.
    lists: bool,
}

/// A random text of 3–6 words.
fn text(rng: &mut SplitMix64) -> String {
    const WORDS: [&str; 12] = [
        "The", "baker", "sold", "bread", "river", "ran", "dry", "a", "cat", "slept", "today",
        "late",
    ];
    let n = 3 + below(rng, 4);
    (0..n)
        .map(|_| WORDS[below(rng, WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

/// The two studies' configs: passages `p1`–`p4` (and a filler `f1`, a practice passage `pr`,
/// a passage named like the built-in `kitchen`), the main study's texts differing from the
/// pilot's for some ids; one design for both.
fn configs(rng: &mut SplitMix64, seed: u64) -> (Vec<StudyConfig>, bool) {
    let ids = ["p1", "p2", "p3", "p4", "f1", "pr", "kitchen"];
    let pilot: Vec<String> = ids.iter().map(|_| text(rng)).collect();
    let main: Vec<String> = pilot
        .iter()
        .map(|t| {
            if below(rng, 2) == 0 {
                t.clone()
            } else {
                text(rng)
            }
        })
        .collect();
    let design = below(rng, 4);
    let practice = below(rng, 2) == 0;
    let screening = below(rng, 2) == 0;
    let mut made = Vec::new();
    for (k, (name, texts)) in [("pilot", &pilot), ("main", &main)].into_iter().enumerate() {
        let texts: Vec<_> = ids
            .iter()
            .zip(texts)
            .map(|(id, t)| json!({"id": id, "title": id, "text": t}))
            .collect();
        let mut config = json!({
            "title": format!("Simulated {name}"),
            "study_id": format!("{name}-{seed}"),
            "texts": texts,
            "consent": "Agree?",
        });
        match design {
            0 => config["passages"] = json!(["p1", "p2", "kitchen"]),
            1 => {
                config["lists"] = json!([
                    {"name": "A", "passages": ["p1", "p2"]},
                    {"name": "B", "passages": ["p3", "kitchen"]}
                ])
            }
            2 => {
                config["latin_square"] =
                    json!({"conditions": ["c1", "c2"], "items": [["p1", "p2"], ["p3", "p4"]]})
            }
            _ => {
                config["latin_square"] =
                    json!({"conditions": ["c1", "c2"], "items": [["p1", "p2"], ["p3", "p4"]]});
                config["lists"] = json!([
                    {"name": "A", "passages": ["f1", "p1", "p4"]},
                    {"name": "B", "passages": ["p2", "f1", "p3"]}
                ]);
            }
        }
        if practice {
            config["practice"] = json!("pr");
        }
        if screening {
            config["questions_before"] = json!([{"id": "native", "text": "Native speaker?",
                "kind": "single_choice", "options": ["Yes", "No"], "screen_out": ["No"]}]);
            config["screened_out_url"] = json!("https://example.org/screened");
        }
        made.push(
            StudyConfig::from_json(&config.to_string())
                .unwrap_or_else(|e| panic!("case {seed}: study {k} refused: {e}\n{config}")),
        );
    }
    (made, design != 0)
}

/// An RFC 3339 time `second` seconds after 2026-11-01T00:00:00Z.
fn at(second: u64) -> String {
    format!(
        "2026-11-{:02}T{:02}:{:02}:{:02}Z",
        1 + second / 86_400,
        second / 3600 % 24,
        second / 60 % 60,
        second % 60
    )
}

/// `config` as a participant's run: a JATOS test run's worker type made a participant's (the
/// planted fault's view of a test run).
fn as_participant(config: &StudyConfig) -> StudyConfig {
    let mut config = config.clone();
    if let Some(run) = config.jatos.as_mut() {
        run.ids
            .insert("workerType".into(), "GeneralMultiple".into());
    }
    config
}

fn simulate(seed: u64, fault: Fault) -> Case {
    let mut rng = SplitMix64::new(seed);
    let (configs, lists) = configs(&mut rng, seed);
    let mut case = Case {
        files: Vec::new(),
        given: BTreeMap::new(),
        runs: BTreeMap::new(),
        configs: configs.clone(),
        lists,
    };
    let mut clock = 0u64;
    let mut result_id = 0u64;
    // A preview is the researcher's, one run ("preview") per browser: one in a case.
    let mut previewed = false;
    for (study, base) in configs.iter().enumerate() {
        let mut batch = Batch::new();
        let people = 3 + below(&mut rng, 6);
        for k in 0..people {
            let mut behaviour = BEHAVIOURS[below(&mut rng, BEHAVIOURS.len())];
            if behaviour == Behaviour::ScreenOut && base.questions_before.is_empty()
                || behaviour == Behaviour::Preview && previewed
            {
                behaviour = Behaviour::Complete;
            }
            previewed |= behaviour == Behaviour::Preview;
            // Past the batch's hold: a run left open never keeps its place from the next.
            clock += 3 * 3600;
            result_id += 1;
            let pid = format!("s{study}p{k}");
            let params = BTreeMap::from([
                ("PROLIFIC_PID".to_string(), pid.clone()),
                ("STUDY_ID".to_string(), format!("prolific-{study}")),
                ("SESSION_ID".to_string(), format!("session-{result_id}")),
            ]);
            let mut config = if behaviour == Behaviour::Preview {
                base.clone().for_preview()
            } else {
                let worker = if behaviour == Behaviour::TestRun {
                    "Jatos"
                } else {
                    "GeneralMultiple"
                };
                let uuid = format!("{:08x}-0000-4000-8000-{result_id:012x}", seed as u32);
                let cookie = format!(
                    "JATOS_IDS_0=studyResultUuid={uuid}&studyResultId={result_id}&workerType={worker}&urlBasePath=/"
                );
                let run = JatosRun::detect(&format!("/publix/{uuid}/c1/start"), &cookie)
                    .expect("a JATOS run");
                base.clone().in_jatos(run)
            };
            let participant = config.participant_id(&params, "local").unwrap();
            let now = clock as f64 * 1000.0;
            let claim = if fault == Fault::TestRunsInLedger {
                batch_list_claim(&as_participant(&config), &participant, &params, now)
            } else {
                batch_list_claim(&config, &participant, &params, now)
            };
            if let Some((_, claim)) = claim {
                let name = batch.carry(claim);
                config.jatos.as_mut().unwrap().batch_list = Some(name);
            }
            let plan = config.plan(&participant, &params).unwrap();
            let run_id = plan.run.clone();
            let list = plan.list.as_ref().map(|l| l.name.clone());
            let screened = behaviour == Behaviour::ScreenOut;
            let manifest = Manifest::new(&ModelInfo::default(), &config, &plan, seed, &at(clock));
            let answers = if base.questions_before.is_empty() {
                Vec::new()
            } else {
                vec![QuestionAnswer {
                    question: "native".into(),
                    answer: if screened { "No" } else { "Yes" }.into(),
                    response_time_ms: Some(800.0),
                    timestamp: at(clock),
                    screened_out: screened,
                }]
            };
            let manifest = manifest.with_details(RunDetails {
                consent_at: Some(at(clock)),
                questions: answers,
                ..RunDetails::default()
            });
            let mut records = Vec::new();
            if !matches!(
                behaviour,
                Behaviour::ScreenOut | Behaviour::LeftBeforeFirstWord
            ) {
                for (passage, practice) in &plan.items {
                    let words: Vec<&str> = passage.text.split_whitespace().collect();
                    for position in 2..=words.len() as u32 {
                        clock += 1 + below(&mut rng, 9) as u64;
                        let target = words[position as usize - 1];
                        // Some answers are the target word itself; the rest name whose they are.
                        let response = if below(&mut rng, 3) == 0 {
                            target.to_string()
                        } else {
                            format!("w{study}x{k}x{}x{position}", passage.id)
                        };
                        records.push(ResponseRecord {
                            participant: participant.clone(),
                            passage: passage.id.clone(),
                            position,
                            response,
                            response_time_ms: Some(500.0 + below(&mut rng, 2000) as f64),
                            timestamp: at(clock),
                            normalized: String::new(),
                            first_keystroke_ms: Some(200.0),
                            practice: *practice,
                            run: run_id.clone(),
                        });
                    }
                }
            }
            let bundle = |records: &[ResponseRecord]| {
                ExportKind::Bundle
                    .render(records, &[], Some(&manifest))
                    .unwrap()
            };
            let name = |what: &str| format!("{study}-{pid}-{result_id}-{what}.json");
            match behaviour {
                Behaviour::Withdraw => {
                    let kept = 1 + below(&mut rng, records.len().max(1));
                    for (i, r) in records.iter().take(kept).enumerate() {
                        case.files
                            .push((name(&format!("answer{i}")), bundle(std::slice::from_ref(r))));
                    }
                    let notice = WithdrawalNotice {
                        participant: participant.clone(),
                        study: base.title.clone(),
                        withdrawn_at: at(clock),
                        run: run_id.clone(),
                    };
                    case.files.push((name("withdrawal"), notice.to_json()));
                }
                Behaviour::Reload => {
                    // Each answer as it was saved, then everything again at the end.
                    for (i, r) in records.iter().enumerate() {
                        case.files
                            .push((name(&format!("answer{i}")), bundle(std::slice::from_ref(r))));
                    }
                    case.files.push((name("final"), bundle(&records)));
                }
                Behaviour::LabDownload => {
                    case.files.push((name("final"), bundle(&records)));
                    case.files.push((
                        format!("lab-{study}-{pid}.csv"),
                        export_long_csv(&records, Delimiter::Comma),
                    ));
                }
                _ => case.files.push((name("final"), bundle(&records))),
            }
            // How the run ended, in the batch's ledger, where the product marks it (the planted
            // fault marks a test run as a participant's).
            let ledger = if fault == Fault::TestRunsInLedger {
                ledger_channel(&as_participant(&config))
            } else {
                ledger_channel(&config)
            };
            let state = match behaviour {
                Behaviour::Withdraw | Behaviour::ScreenOut => Some(LedgerState::Ended),
                Behaviour::LeftBeforeFirstWord => None,
                _ => Some(LedgerState::Complete),
            };
            if let (Some(list), Some(state), Some(_)) = (&list, state, ledger) {
                batch.carry(ListClaim::mark(&participant, list, state, now));
            }
            if behaviour != Behaviour::Withdraw {
                for r in &records {
                    let text = &base.texts.iter().find(|p| p.id == r.passage).unwrap().text;
                    let words: Vec<&str> = text.split_whitespace().collect();
                    let position = r.position as usize;
                    case.given.insert(
                        (
                            participant.clone(),
                            run_id.clone(),
                            r.passage.clone(),
                            r.position,
                        ),
                        Given {
                            study,
                            response: r.response.clone(),
                            context: words[..position - 1].join(" "),
                            target: words[position - 1].to_string(),
                            text_id: own_text_id(&r.passage, text),
                            practice: r.practice,
                        },
                    );
                }
            }
            case.runs.insert(
                (participant, run_id),
                Played {
                    study,
                    behaviour,
                    list,
                },
            );
        }
    }
    case
}

/// The built-in passages, as the page and the CLI give them.
fn built_in() -> Vec<(String, String)> {
    clozelab::game::design::passages::built_in_passages()
        .into_iter()
        .map(|p| (p.id, p.text))
        .collect()
}

/// The case's tables as `clozelab results` makes them; with [`Fault::BareIdMerge`], with the
/// answers placed by passage id alone.
fn tables(case: &Case, fault: Fault) -> StudyTables {
    if fault != Fault::BareIdMerge {
        return dataset_from_files(&case.files, &built_in(), ExclusionRules::default())
            .unwrap()
            .tables()
            .unwrap();
    }
    let results: Vec<(String, Vec<u8>)> = case
        .files
        .iter()
        .filter(|(_, text)| is_study_answers(text))
        .map(|(name, text)| (name.clone(), text.clone().into_bytes()))
        .collect();
    let read = StudyResults::read(results).unwrap();
    let exclusions = decide(&read.participants, &ExclusionRules::default());
    let mut kept = read.clone();
    kept.without(&exclusions);
    let mut by_id: Vec<(String, String)> = case
        .configs
        .iter()
        .flat_map(|c| c.texts.iter().map(|p| (p.id.clone(), p.text.clone())))
        .collect();
    by_id.extend(built_in());
    let texts = PassageTexts::shared(&by_id);
    let data = match Dataset::from_files(&[], &texts, &kept.responses) {
        Err(DatasetError::NoNorms) => Dataset::default(),
        other => other.unwrap(),
    };
    study_tables(&read, &exclusions, &data, &texts)
}

fn parse(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    reader
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

/// Every invariant of the case's tables; the first broken one, said.
fn check(case: &Case, tables: &StudyTables) -> Result<(), String> {
    let trials = parse(&tables.trials);
    // Every answer once, with its own study's context, target word and text.
    let mut seen = BTreeSet::new();
    for row in &trials {
        let key = (
            row["participant"].clone(),
            row["run"].clone(),
            row["passage"].clone(),
            row["position"].parse::<u32>().unwrap(),
        );
        if !seen.insert(key.clone()) {
            return Err(format!("answer {key:?} in two rows"));
        }
        let Some(given) = case.given.get(&key) else {
            return Err(format!("a row no run gave: {key:?}"));
        };
        let run = &case.runs[&(key.0.clone(), key.1.clone())];
        if run.study != given.study || row["study_id"] != case.configs[given.study].study_id() {
            return Err(format!(
                "{key:?} is in study {} of the table",
                row["study_id"]
            ));
        }
        for (column, expected) in [
            ("response", given.response.clone()),
            ("context", given.context.clone()),
            ("target_word", given.target.clone()),
            ("text_id", given.text_id.to_string()),
            ("practice", given.practice.to_string()),
        ] {
            if row[column] != expected {
                return Err(format!(
                    "{key:?}: {column} {:?}, given {expected:?}",
                    row[column]
                ));
            }
        }
        let excluded = matches!(run.behaviour, Behaviour::TestRun | Behaviour::Preview);
        if row["excluded"] != excluded.to_string() {
            return Err(format!(
                "{key:?}: excluded {} for a {:?} run",
                row["excluded"], run.behaviour
            ));
        }
    }
    if seen.len() != case.given.len() {
        let missing: Vec<_> = case
            .given
            .keys()
            .filter(|k| !seen.contains(*k))
            .take(3)
            .collect();
        return Err(format!(
            "{} answers have no row, e.g. {missing:?}",
            case.given.len() - seen.len()
        ));
    }
    // Every run once in runs.csv, in the state it ended in.
    let runs = parse(&tables.runs);
    if runs.len() != case.runs.len() {
        return Err(format!(
            "runs.csv has {} runs of {}",
            runs.len(),
            case.runs.len()
        ));
    }
    for row in &runs {
        let key = (row["participant"].clone(), row["run"].clone());
        let Some(played) = case.runs.get(&key) else {
            return Err(format!("runs.csv has a run nobody played: {key:?}"));
        };
        let state = match played.behaviour {
            Behaviour::Withdraw => "withdrawn",
            Behaviour::ScreenOut => "screened_out",
            Behaviour::LeftBeforeFirstWord => "incomplete",
            _ => "complete",
        };
        if row["run_state"] != state || row["list"] != played.list.clone().unwrap_or_default() {
            return Err(format!(
                "{key:?} ({:?}): state {} list {:?} in runs.csv",
                played.behaviour, row["run_state"], row["list"]
            ));
        }
    }
    // The flow adds up to the runs.
    let flow = &tables.flow;
    let count = |b: Behaviour| case.runs.values().filter(|p| p.behaviour == b).count();
    let left_out = |code: &str| {
        flow.left_out
            .iter()
            .find(|(c, _)| *c == code)
            .map_or(0, |(_, n)| *n)
    };
    if flow.started != case.runs.len()
        || flow.started != flow.withdrew + flow.left_out_runs() + flow.analysed_runs()
        || flow.withdrew != count(Behaviour::Withdraw)
        || left_out("jatos_test_run") != count(Behaviour::TestRun)
        || left_out("preview") != count(Behaviour::Preview)
    {
        return Err(format!("the flow does not add up: {}", flow.sentence()));
    }
    // Lists balanced within one over the analysed participants of each study.
    if case.lists {
        for (study, config) in case.configs.iter().enumerate() {
            let mut per_list: BTreeMap<&str, usize> =
                config.lists.iter().map(|l| (l.name.as_str(), 0)).collect();
            for row in &runs {
                let played = &case.runs[&(row["participant"].clone(), row["run"].clone())];
                if played.study == study
                    && row["run_state"] == "complete"
                    && row["excluded"] == "false"
                {
                    *per_list.get_mut(row["list"].as_str()).unwrap() += 1;
                }
            }
            let (least, most) = (
                per_list.values().min().unwrap(),
                per_list.values().max().unwrap(),
            );
            if most - least > 1 {
                return Err(format!(
                    "study {study}'s analysed lists are unbalanced: {per_list:?}"
                ));
            }
        }
    }
    // norms.csv holds exactly the analysed answers (each participant's first per context).
    let mut expected: BTreeMap<(u32, u32), BTreeMap<String, u32>> = BTreeMap::new();
    let mut answered = BTreeSet::new();
    for ((participant, run, _, position), given) in &case.given {
        let played = &case.runs[&(participant.clone(), run.clone())];
        let word = clozelab::text::words::normalize(&given.response);
        if given.practice
            || word.is_empty()
            || matches!(played.behaviour, Behaviour::TestRun | Behaviour::Preview)
            || !answered.insert((participant.clone(), given.text_id, *position))
        {
            continue;
        }
        *expected
            .entry((given.text_id, *position))
            .or_default()
            .entry(word)
            .or_default() += 1;
    }
    let (norms, skipped) =
        import_provo_norms("norms.csv", &tables.norms).map_err(|e| e.to_string())?;
    let read: BTreeMap<(u32, u32), BTreeMap<String, u32>> = norms
        .contexts
        .values()
        .map(|c| ((c.text_id, c.word_num), c.human.clone()))
        .collect();
    if !skipped.is_empty() || read != expected {
        return Err(format!(
            "norms.csv differs from the analysed answers ({} contexts read, {} expected)",
            read.len(),
            expected.len()
        ));
    }
    Ok(())
}

#[test]
fn simulated_studies_export_every_answer_once_in_its_own_context() {
    for seed in 0..CASES {
        let case = simulate(seed, Fault::None);
        if let Err(why) = check(&case, &tables(&case, Fault::None)) {
            panic!("case {seed}: {why}");
        }
    }
}

/// A planted fault must break the checks in some of the cases (the cases that meet it).
fn caught(fault: Fault) -> usize {
    (0..CASES / 5)
        .filter(|&seed| {
            let case = simulate(seed, fault);
            check(&case, &tables(&case, fault)).is_err()
        })
        .count()
}

#[test]
fn a_bare_id_merge_is_caught() {
    assert!(
        caught(Fault::BareIdMerge) > 0,
        "answers merged by bare id went unnoticed"
    );
}

#[test]
fn test_runs_taking_list_places_are_caught() {
    assert!(
        caught(Fault::TestRunsInLedger) > 0,
        "test runs in the ledger went unnoticed"
    );
}
