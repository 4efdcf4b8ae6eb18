//! One context or text at a time: `clozelab next-token`, `word-dist`, `word-prob` and
//! `surprisal`.

use super::commands::{NextTokenArgs, SurprisalArgs, WordDistArgs, WordProbArgs};
use super::error::CliError;
use super::load_engine;
use crate::estimators::decoding::DecodingStrategy;
use crate::estimators::sampler::{SamplerConfig, contexts_to_join, sample_words_for_contexts};
use crate::runtime::backend::BackendKind;

pub fn next_token(args: &NextTokenArgs) -> Result<(), CliError> {
    let (engine, adapter) = load_engine(&args.model)?;
    let backend = args.model.backend;
    let tokens = pollster::block_on(engine.next_tokens(&args.context, args.top))?;
    if args.json {
        let json = serde_json::json!({"backend": backend.name(), "tokens": tokens});
        println!("{json}");
    } else {
        println!("backend: {} ({adapter})", backend.name());
        for t in tokens {
            println!(
                "{:>8.4}  {:>6.2}%  {:>6}  {}",
                t.logprob,
                100.0 * t.logprob.exp(),
                t.id,
                t.label
            );
        }
    }
    Ok(())
}

/// Reports progress on stderr when it is a terminal.
fn stderr_monitor() -> impl crate::estimators::progress::Monitor {
    use std::io::IsTerminal;
    let start = std::time::Instant::now();
    let tty = std::io::stderr().is_terminal();
    crate::estimators::progress::FnMonitor {
        clock: move || start.elapsed().as_secs_f64(),
        on_progress: move |p: &crate::estimators::progress::Progress| {
            if tty {
                eprint!(
                    "\r{} samples, {:.0}/s   ",
                    p.samples_done,
                    p.samples_per_s().unwrap_or(0.0)
                );
            }
            true
        },
    }
}

pub fn word_dist(args: &WordDistArgs) -> Result<(), CliError> {
    let strategy = DecodingStrategy::new(args.temperature, args.top_k, args.top_p, args.typical)?;
    let config = SamplerConfig::new(args.samples, args.seed)
        .and_then(|c| c.with_token_budget(args.budget))
        .and_then(|c| {
            c.with_contexts_per_pass(
                args.contexts_per_pass
                    .unwrap_or_else(|| contexts_to_join(args.samples)),
            )
        })?
        .with_strategy(strategy);
    let (engine, _) = load_engine(&args.model)?;
    let backend = args.model.backend;
    // Fixed batch sizes only pay off where kernels are compiled per shape.
    let config = config.with_batch_buckets(backend == BackendKind::Wgpu);
    let all = pollster::block_on(sample_words_for_contexts(
        &engine.model,
        &engine.tokenizer,
        &args.context,
        &config,
        &mut stderr_monitor(),
    ))?;
    for (context, samples) in args.context.iter().zip(all) {
        if args.json {
            // One line per context (JSON Lines).
            println!(
                "{}",
                serde_json::json!({"context": context, "n": samples.n, "failed": samples.failed, "words": samples.relative_frequencies()})
            );
            continue;
        }
        if args.context.len() > 1 {
            println!("{context}");
        }
        println!("{} samples, {} failed", samples.n, samples.failed);
        let mut words: Vec<(String, f64)> = samples.relative_frequencies().into_iter().collect();
        words.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (w, p) in words {
            println!("{p:>8.4}  {w}");
        }
    }
    Ok(())
}

pub fn word_prob(args: &WordProbArgs) -> Result<(), CliError> {
    let (engine, _) = load_engine(&args.model)?;
    let mut scorer = crate::estimators::wordprob::WordScorer::new(&engine.tokenizer);
    let scores = pollster::block_on(scorer.score(
        &engine.model,
        &engine.tokenizer,
        &args.context,
        &args.words,
        args.temperature,
        &mut stderr_monitor(),
    ))?;
    if args.json {
        let rows: Vec<serde_json::Value> = scores
            .iter()
            .map(|s| serde_json::json!({"word": s.word, "prob": s.prob, "logprob": s.logprob, "prob_no_end": s.prob_no_end, "segmentations": s.segmentations}))
            .collect();
        println!("{}", serde_json::json!({"words": rows}));
    } else {
        for s in scores {
            let lp = s.logprob.map_or("-inf".to_string(), |l| format!("{l:.4}"));
            println!(
                "{:<20} prob {:.6e}  logprob {lp}  without end {:.6e}  segmentations {}",
                s.word, s.prob, s.prob_no_end, s.segmentations
            );
        }
    }
    Ok(())
}

pub fn surprisal(args: &SurprisalArgs) -> Result<(), CliError> {
    use crate::estimators::surprisal::{SurprisalOptions, text_surprisals};
    let text = match (&args.text, &args.file) {
        (Some(text), _) => text.clone(),
        (None, Some(path)) => std::fs::read_to_string(path).map_err(|source| CliError::Io {
            action: "read",
            path: path.clone(),
            source,
        })?,
        (None, None) => return Err(CliError::Usage("give --text or --file".into())),
    };
    let (engine, _) = load_engine(&args.model)?;
    let options = SurprisalOptions::every_predictor(
        args.samples,
        args.seed,
        args.model.backend == BackendKind::Wgpu,
    )?;
    let words = pollster::block_on(text_surprisals(
        &engine.model,
        &engine.tokenizer,
        &text,
        &options,
        &mut stderr_monitor(),
    ))?;
    let bits = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    for w in words {
        if args.json {
            println!(
                "{}",
                serde_json::to_string(&w).expect("plain numbers and strings")
            );
        } else {
            println!(
                "{:<20} surprisal {:>8.3}  all segmentations {:>8}  entropy {:>7} ± {}",
                w.word,
                w.surprisal_bits,
                bits(w.surprisal_all_segmentations_bits),
                bits(w.entropy_bits),
                bits(w.entropy_standard_error_bits)
            );
        }
    }
    Ok(())
}
