//! The next-token games on the command line: human perplexity from two-token answers, top-1
//! accuracy, and the estimator's bias simulation — the same core code as the app.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::commands::{PerplexityArgs, PerplexitySimArgs, Top1Args};
use super::error::CliError;
use super::flags::Truth;
use super::{load_engine, load_engine_from};
use crate::analysis::perplexity::{
    BiasSetup, LossEstimate, PTrue, Pair, Round, estimate_loss, model_player_pairs,
};
use crate::data::DataError;
use crate::data::rows::read_rows;
use crate::game::design::passages::{built_in_passages, parse_plain_text};
use crate::game::tokens::single_token;
use crate::game::tokens::top1::is_correct;
use crate::runtime::distributions::{next_token_logprobs, simulate_bias};
use crate::runtime::engine::Engine;

/// A token in an answer file: its id, or text that is exactly one GPT-2 token.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum TokenRef {
    Id(u32),
    Text(String),
}

#[derive(Deserialize)]
struct TwoTokenRow {
    context: String,
    true_token: TokenRef,
    other_token: TokenRef,
    p_true: f64,
}

#[derive(Deserialize)]
struct Top1Row {
    #[serde(default)]
    participant: Option<String>,
    context: String,
    true_token: TokenRef,
    guess: String,
}

fn at_line(file: &str, line: usize, message: String) -> CliError {
    CliError::Data(DataError::At {
        file: file.into(),
        line,
        column: 1,
        message,
    })
}

fn resolve(engine: &Engine, token: &TokenRef) -> Result<u32, String> {
    match token {
        TokenRef::Id(id) if (*id as usize) < engine.tokenizer.vocab_size() => Ok(*id),
        TokenRef::Id(id) => Err(format!("token id {id} is outside the vocabulary")),
        TokenRef::Text(text) => single_token(&engine.tokenizer, text)
            .as_typed
            .ok_or_else(|| format!("{text:?} is not a single GPT-2 token")),
    }
}

fn read_answers<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<(String, Vec<(usize, T)>), CliError> {
    let text = std::fs::read_to_string(path).map_err(CliError::io("read", path))?;
    let name = path.display().to_string();
    let rows = read_rows(&name, &text)?;
    if rows.is_empty() {
        return Err(CliError::Data(DataError::Invalid {
            file: name,
            message: "no answers in the file".into(),
        }));
    }
    Ok((name, rows))
}

/// ln g(·|context) for each distinct context, computed once: `wanted` token ids per context.
fn logprobs_of(
    engine: &Engine,
    wanted: &BTreeMap<String, Vec<u32>>,
) -> Result<BTreeMap<String, BTreeMap<u32, f64>>, CliError> {
    let mut out = BTreeMap::new();
    for (context, ids) in wanted {
        let context_ids = engine.tokenizer.encode_context(context)?;
        let all = pollster::block_on(next_token_logprobs(&engine.model, &context_ids))?;
        let picked = ids
            .iter()
            .map(|&id| (id, f64::from(all[id as usize])))
            .collect();
        out.insert(context.clone(), picked);
    }
    Ok(out)
}

/// One answered round, resolved to ids.
struct Answered {
    context: String,
    true_id: u32,
    other_id: u32,
    p_true: PTrue,
}

#[derive(Serialize)]
struct ModelPlayer {
    name: String,
    rounded: bool,
    #[serde(flatten)]
    estimate: LossEstimate,
}

/// A pair's key and its other tokens, in round order: (context, true token, other tokens).
type PairKey = (String, u32, Vec<u32>);

/// Pairs in first-seen order of (context, true token), with ln g from `g`.
fn pairs_from(
    answered: &[Answered],
    g: &BTreeMap<String, BTreeMap<u32, f64>>,
) -> (Vec<Pair>, Vec<PairKey>) {
    let mut order: Vec<PairKey> = Vec::new();
    let mut pairs: Vec<Pair> = Vec::new();
    for a in answered {
        let key = order
            .iter()
            .position(|(c, y, _)| *c == a.context && *y == a.true_id);
        let index = key.unwrap_or_else(|| {
            order.push((a.context.clone(), a.true_id, Vec::new()));
            pairs.push(Pair {
                logp_true: g[&a.context][&a.true_id],
                rounds: Vec::new(),
            });
            order.len() - 1
        });
        order[index].2.push(a.other_id);
        pairs[index].rounds.push(Round {
            logp_other: g[&a.context][&a.other_id],
            p_true: a.p_true,
        });
    }
    (pairs, order)
}

fn model_players(
    name: &str,
    pairs: &[Pair],
    order: &[PairKey],
    m: &BTreeMap<String, BTreeMap<u32, f64>>,
) -> Result<Vec<ModelPlayer>, CliError> {
    let logp: Vec<(f64, Vec<f64>)> = order
        .iter()
        .map(|(c, y, xs)| (m[c][y], xs.iter().map(|x| m[c][x]).collect()))
        .collect();
    [false, true]
        .into_iter()
        .map(|rounded| {
            Ok(ModelPlayer {
                name: name.to_string(),
                rounded,
                estimate: estimate_loss(&model_player_pairs(pairs, &logp, rounded))?,
            })
        })
        .collect()
}

/// `clozelab perplexity`: L_h ± 2σ from two-token answers; the generator (and an opponent) as
/// players on the same rounds.
pub fn perplexity(args: &PerplexityArgs) -> Result<(), CliError> {
    let (engine, _) = load_engine(&args.model)?;
    let (file, rows) = read_answers::<TwoTokenRow>(&args.answers)?;
    let mut answered = Vec::with_capacity(rows.len());
    let mut wanted: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (line, row) in rows {
        let at = |m: String| at_line(&file, line, m);
        let true_id =
            resolve(&engine, &row.true_token).map_err(|m| at(format!("true_token: {m}")))?;
        let other_id =
            resolve(&engine, &row.other_token).map_err(|m| at(format!("other_token: {m}")))?;
        let p_true = PTrue::new(row.p_true).map_err(|e| at(e.to_string()))?;
        wanted
            .entry(row.context.clone())
            .or_default()
            .extend([true_id, other_id]);
        answered.push(Answered {
            context: row.context,
            true_id,
            other_id,
            p_true,
        });
    }
    let g = logprobs_of(&engine, &wanted)?;
    let (pairs, order) = pairs_from(&answered, &g);
    let human = estimate_loss(&pairs)?;
    let mut json = serde_json::to_value(&human)?;
    if args.players || args.opponent.is_some() {
        let mut players = model_players("generator", &pairs, &order, &g)?;
        if let Some(dir) = &args.opponent {
            let (other, _) = load_engine_from(dir, args.model.backend, args.model.precision)?;
            let m = logprobs_of(&other, &wanted)?;
            let name = dir.display().to_string();
            players.extend(model_players(&name, &pairs, &order, &m)?);
        }
        json["model_players"] = serde_json::to_value(&players)?;
    }
    if args.json {
        println!("{json}");
    } else {
        println!(
            "{} pairs, {} rounds\nGPT-2 (generator) loss {:.3}, perplexity {:.1}\nhumans loss {:.3} \
             [{:.3}, {:.3}], perplexity {:.1} [{:.1}, {:.1}] (±2σ over pairs)",
            human.pairs,
            human.rounds,
            human.loss_generator,
            human.loss_generator.exp(),
            human.loss_human,
            human.loss_human_low,
            human.loss_human_high,
            human.perplexity_human,
            human.perplexity_human_low,
            human.perplexity_human_high
        );
    }
    Ok(())
}

/// `clozelab top1`: the players' top-1 accuracy beside GPT-2's arg-max on the same positions.
pub fn top1(args: &Top1Args) -> Result<(), CliError> {
    let (engine, _) = load_engine(&args.model)?;
    let (file, rows) = read_answers::<Top1Row>(&args.answers)?;
    let mut per: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    let mut argmax: BTreeMap<String, u32> = BTreeMap::new();
    for (line, row) in &rows {
        let true_id = resolve(&engine, &row.true_token)
            .map_err(|m| at_line(&file, *line, format!("true_token: {m}")))?;
        if !argmax.contains_key(&row.context) {
            let ids = engine.tokenizer.encode_context(&row.context)?;
            let all = pollster::block_on(next_token_logprobs(&engine.model, &ids))?;
            let best = crate::runtime::distributions::top_k(&all, 1)
                .first()
                .map(|(id, _)| *id)
                .unwrap_or(0);
            argmax.insert(row.context.clone(), best);
        }
        let guess_id = single_token(&engine.tokenizer, &row.guess).as_typed;
        let true_text = engine.tokenizer.token_text(true_id);
        let entry = per
            .entry(row.participant.clone().unwrap_or_default())
            .or_default();
        entry.0 += 1;
        entry.1 += usize::from(is_correct(&row.guess, guess_id, true_id, &true_text));
        entry.2 += usize::from(argmax[&row.context] == true_id);
    }
    let total = |f: fn(&(usize, usize, usize)) -> usize| per.values().map(f).sum::<usize>();
    let n = total(|e| e.0) as f64;
    let participants: Vec<serde_json::Value> = per
        .iter()
        .map(|(p, (n, right, model))| {
            serde_json::json!({
                "participant": p, "positions": n,
                "accuracy": *right as f64 / *n as f64,
                "model_accuracy": *model as f64 / *n as f64,
            })
        })
        .collect();
    let json = serde_json::json!({
        "positions": rows.len(),
        "human_accuracy": total(|e| e.1) as f64 / n,
        "model_accuracy": total(|e| e.2) as f64 / n,
        "participants": participants,
    });
    if args.json {
        println!("{json}");
    } else {
        println!(
            "{} positions: humans {:.1} % top-1, GPT-2 {:.1} %",
            rows.len(),
            100.0 * total(|e| e.1) as f64 / n,
            100.0 * total(|e| e.2) as f64 / n
        );
    }
    Ok(())
}

/// `clozelab perplexity-sim`: a known player (the model at another temperature) answers exactly;
/// how far the estimate falls from its true loss, for several rounds per pair.
pub fn perplexity_sim(args: &PerplexitySimArgs) -> Result<(), CliError> {
    let (engine, _) = load_engine(&args.model)?;
    let setup = BiasSetup {
        positions: args.positions,
        player_temperature: args.player_temperature,
        // The random test model is nearly uniform; a generator temperature below 1 makes it as
        // peaked as GPT-2 (mean entropy ~3 nats) for a realistic simulation.
        generator_temperature: args.generator_temperature,
        truth_from_generator: args.truth == Truth::Generator,
        rounds_per_pair: args.rounds.clone(),
        repetitions: args.repetitions,
        seed: args.seed,
    };
    setup.validate()?;
    let passages = match &args.text {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(CliError::io("read", path))?;
            parse_plain_text(&text)
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?
        }
        None => built_in_passages(),
    };
    let ids = passages
        .iter()
        .map(|p| engine.tokenizer.encode(&p.text))
        .collect::<Result<Vec<_>, _>>()?;
    let keep_going = |_| std::future::ready(true);
    let (contexts, points) =
        pollster::block_on(simulate_bias(&engine.model, &ids, &setup, keep_going))?
            .unwrap_or_default();
    let (temperature, generator_temperature, repetitions) = (
        setup.player_temperature,
        setup.generator_temperature,
        setup.repetitions,
    );
    let from_generator = setup.truth_from_generator;
    if args.json {
        let json = serde_json::json!({
            "contexts": contexts, "player_temperature": temperature,
            "generator_temperature": generator_temperature,
            "truth": if from_generator { "generator" } else { "text" },
            "repetitions": repetitions, "points": points,
        });
        println!("{json}");
    } else {
        println!(
            "{} contexts, generator = model at T={generator_temperature}, player = generator at \
             T={temperature}, {repetitions} repetitions",
            contexts
        );
        println!("rounds/pair  true loss  mean estimate  bias (est − true)  sd");
        for p in &points {
            println!(
                "{:>11}  {:>9.3}  {:>13.3}  {:>17.3}  {:.3}",
                p.rounds_per_pair, p.true_loss, p.mean_estimate, p.bias, p.sd
            );
        }
    }
    Ok(())
}
