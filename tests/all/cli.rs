//! The `clozelab` binary: make-test-model and next-token, including bad input.

use crate::common;

use std::process::Command;

fn clozelab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_clozelab"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn make_test_model_is_deterministic_and_next_token_prints_json() {
    let Some(vocab) = common::vocab_dir() else {
        panic!("GPT-2 vocabulary missing: run `npm ci` (the test command does)");
    };
    let root = common::repo_root()
        .join("target")
        .join(format!("cli-test-{}", std::process::id()));
    let (a, b) = (root.join("a"), root.join("b"));
    for dir in [&a, &b] {
        let out = clozelab(&[
            "make-test-model",
            "--out",
            dir.to_str().unwrap(),
            "--seed",
            "5",
            "--layers",
            "1",
            "--dim",
            "16",
            "--heads",
            "2",
            "--tokenizer",
            vocab.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let same = std::fs::read(a.join("model.safetensors")).unwrap()
        == std::fs::read(b.join("model.safetensors")).unwrap();
    assert!(
        same,
        "make-test-model wrote different bytes for the same seed"
    );

    let out = clozelab(&[
        "next-token",
        "--model",
        a.to_str().unwrap(),
        "--context",
        "Hello world",
        "--top",
        "7",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("random test model"));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["backend"], "cpu");
    let tokens = json["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 7);
    let lps: Vec<f64> = tokens
        .iter()
        .map(|t| t["logprob"].as_f64().unwrap())
        .collect();
    assert!(
        lps.windows(2).all(|w| w[0] >= w[1]),
        "sorted best first: {lps:?}"
    );
    assert!(lps.iter().all(|lp| *lp < 0.0 && lp.is_finite()));
    assert!(
        tokens
            .iter()
            .all(|t| t["id"].as_u64().unwrap() < 50257 && t["text"].is_string())
    );

    // The same through the library (the CLI adds nothing of its own to the numbers).
    let files = clozelab::runtime::modeldir::read_model_dir(&a).unwrap();
    let device = clozelab::runtime::backend::cpu_device();
    let (_, model) =
        clozelab::model::load_transformer(&files.config_json, &files.weights, &device.device)
            .unwrap();
    let direct = pollster::block_on(clozelab::runtime::distributions::next_tokens(
        &model,
        &files.tokenizer,
        "Hello world",
        7,
    ))
    .unwrap();
    for (t, d) in tokens.iter().zip(&direct) {
        assert_eq!(t["id"].as_u64().unwrap(), d.id as u64);
        assert!((t["logprob"].as_f64().unwrap() - d.logprob).abs() < 1e-9);
    }

    // Empty context conditions on <|endoftext|> and still works.
    let out = clozelab(&[
        "next-token",
        "--model",
        a.to_str().unwrap(),
        "--context",
        "",
        "--json",
    ]);
    assert!(out.status.success());
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn bad_arguments_and_files_fail_cleanly() {
    let cases: &[&[&str]] = &[
        &[
            "next-token",
            "--model",
            "/nonexistent/dir",
            "--context",
            "x",
        ],
        &["next-token", "--context", "x"],
        &["next-token", "--model"],
        &[
            "next-token",
            "--model",
            ".",
            "--context",
            "x",
            "--backend",
            "tpu",
        ],
        &[
            "next-token",
            "--model",
            ".",
            "--context",
            "x",
            "--top",
            "many",
        ],
        &[
            "make-test-model",
            "--out",
            "/tmp/x",
            "--dim",
            "10",
            "--heads",
            "3",
        ],
        &["frobnicate"],
        &["next-token", "--bogus", "1"],
    ];
    for args in cases {
        let out = clozelab(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("clozelab: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    // A folder whose weights are garbage.
    let dir = common::repo_root()
        .join("target")
        .join(format!("cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        clozelab::model::TransformerConfig::gpt2_small().to_hf_json(),
    )
    .unwrap();
    std::fs::write(
        dir.join("model.safetensors"),
        b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":",
    )
    .unwrap();
    if let Some(v) = common::vocab_dir() {
        for (from, to) in [
            ("encoder.json", "vocab.json"),
            ("vocab.bpe", "merges.txt"),
            ("vocab.json", "vocab.json"),
            ("merges.txt", "merges.txt"),
        ] {
            if v.join(from).is_file() {
                std::fs::copy(v.join(from), dir.join(to)).unwrap();
            }
        }
    }
    let out = clozelab(&[
        "next-token",
        "--model",
        dir.to_str().unwrap(),
        "--context",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("weights file") || stderr.contains("tokenizer"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn model_parts_are_found_by_name() {
    use clozelab::runtime::engine::{ChosenFilesError, TokenizerFiles, model_parts_from_files};
    let files = vec![
        ("C:\\models\\Model.SafeTensors".to_string(), vec![1u8]),
        ("readme.md".to_string(), vec![]),
        ("gpt2/config.json".to_string(), b"{}".to_vec()),
        ("encoder.json".to_string(), b"{}".to_vec()),
        ("vocab.bpe".to_string(), b"#version".to_vec()),
    ];
    let parts = model_parts_from_files(files).unwrap();
    assert_eq!(parts.weights, vec![1u8]);
    assert!(matches!(
        parts.tokenizer,
        TokenizerFiles::VocabAndMerges { .. }
    ));
    assert!(
        model_parts_from_files(vec![("config.json".into(), b"{}".to_vec())])
            .unwrap_err()
            .to_string()
            .contains("safetensors")
    );
    let two = vec![
        ("a.safetensors".into(), vec![]),
        ("b.safetensors".into(), vec![]),
        ("config.json".into(), vec![]),
    ];
    assert_eq!(
        model_parts_from_files(two).unwrap_err(),
        ChosenFilesError::SeveralWeightFiles
    );
    let bad_utf8 = vec![
        ("config.json".into(), vec![0xff, 0xfe]),
        ("m.safetensors".into(), vec![]),
        ("tokenizer.json".into(), vec![]),
    ];
    assert!(
        model_parts_from_files(bad_utf8)
            .unwrap_err()
            .to_string()
            .contains("UTF-8")
    );
}

#[test]
fn word_dist_and_word_prob_print_the_issue_json() {
    let model = common::test_model_dir().to_str().unwrap();
    let out = clozelab(&[
        "word-dist",
        "--model",
        model,
        "--context",
        "The cat sat on the",
        "--samples",
        "200",
        "--seed",
        "4",
        "--temperature",
        "0.5",
        "--top-p",
        "0.9",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["n"], 200);
    let failed = json["failed"].as_u64().unwrap();
    let words = json["words"].as_object().unwrap();
    let total: f64 = words.values().map(|p| p.as_f64().unwrap()).sum();
    assert!(failed < 200 && (total - 1.0).abs() < 1e-9, "{json}");
    assert!(
        words
            .keys()
            .all(|w| *w == clozelab::text::words::normalize(w)),
        "words are normalised"
    );
    let again = clozelab(&[
        "word-dist",
        "--model",
        model,
        "--context",
        "The cat sat on the",
        "--samples",
        "200",
        "--seed",
        "4",
        "--temperature",
        "0.5",
        "--top-p",
        "0.9",
        "--json",
    ]);
    assert_eq!(out.stdout, again.stdout, "same seed, same output");

    // Several contexts: a JSON line each, in order; context i draws with seed + i, so one at a
    // time each line is that context's run alone.
    let dist = |contexts: &[&str], seed: &str, per_pass: &str| {
        let mut args = vec![
            "word-dist",
            "--model",
            model,
            "--samples",
            "60",
            "--seed",
            seed,
        ];
        for c in contexts {
            args.extend(["--context", c]);
        }
        args.extend(["--contexts-per-pass", per_pass, "--json"]);
        let out = clozelab(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let contexts = ["The cat sat on the", "Once upon a"];
    let one_at_a_time = dist(&contexts, "7", "1");
    assert_eq!(one_at_a_time.len(), 2);
    assert_eq!(one_at_a_time[1]["context"], "Once upon a");
    assert_eq!(one_at_a_time[1], dist(&contexts[1..], "8", "1")[0]);
    let together = dist(&contexts, "7", "2");
    assert_eq!(together.len(), 2);
    assert!(together.iter().all(|line| line["n"] == 60));

    let out = clozelab(&[
        "word-prob",
        "--model",
        model,
        "--context",
        "The cat sat on the",
        "--word",
        "hat",
        "--word",
        "Zürich",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = json["words"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["word"], "Zürich");
    for r in rows {
        let (p, lp, no_end) = (
            r["prob"].as_f64().unwrap(),
            r["logprob"].as_f64().unwrap(),
            r["prob_no_end"].as_f64().unwrap(),
        );
        assert!(p > 0.0 && p <= no_end && (lp - p.ln()).abs() < 1e-9, "{r}");
        assert!(r["segmentations"].as_u64().unwrap() >= 1);
    }

    for bad in [
        vec![
            "word-prob",
            "--model",
            model,
            "--context",
            "x",
            "--word",
            "two words",
        ],
        vec!["word-prob", "--model", model, "--context", "x"],
        vec![
            "word-dist",
            "--model",
            model,
            "--context",
            "x",
            "--samples",
            "0",
        ],
        vec![
            "word-dist",
            "--model",
            model,
            "--context",
            "x",
            "--top-p",
            "1.5",
        ],
        vec![
            "word-dist",
            "--model",
            model,
            "--context",
            "x",
            "--temperature",
            "nan",
        ],
    ] {
        let out = clozelab(&bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .any(|l| l.starts_with("clozelab: ")),
            "{bad:?}"
        );
    }
}

/// ln g(·|context) by brute force: a full forward pass without the cache, the last row's
/// log-softmax in f64 (the CLI goes through the cached path and burn's log_softmax).
fn brute_force_logprobs(context: &str) -> Vec<f64> {
    use clozelab::runtime::backend::cpu_device;
    use clozelab::runtime::engine::Engine;
    use clozelab::runtime::modeldir::read_model_dir;
    let files = read_model_dir(common::test_model_dir()).unwrap();
    let engine = Engine::with_tokenizer(
        &files.config_json,
        &files.weights,
        files.tokenizer,
        &cpu_device().device,
    )
    .unwrap();
    let ids = engine.tokenizer.encode_context(context).unwrap();
    let tokens = engine
        .model
        .token_tensor(std::slice::from_ref(&ids))
        .unwrap();
    let logits = engine.model.forward(tokens).unwrap();
    let all = pollster::block_on(clozelab::model::readback::read_f32(logits)).unwrap();
    let vocab = engine.tokenizer.vocab_size();
    let last: Vec<f64> = all[(ids.len() - 1) * vocab..ids.len() * vocab]
        .iter()
        .map(|&l| f64::from(l))
        .collect();
    let max = last.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log_z = max + last.iter().map(|l| (l - max).exp()).sum::<f64>().ln();
    last.iter().map(|l| l - log_z).collect()
}

#[test]
fn perplexity_matches_a_brute_force_computation_on_the_test_model() {
    let model = common::test_model_dir().to_str().unwrap();
    let dir = common::test_model_dir().join("answers");
    std::fs::create_dir_all(&dir).unwrap();
    // (context, true id, other id, p_true); " the" = 262 given as text once.
    let rounds = [
        ("The cat sat on the", "2603", "3290", 0.7),
        ("The cat sat on the", "2603", "1110", 0.4),
        ("The cat sat on the", "2603", "2603", 0.5),
        ("Once upon a", "640", "\" the\"", 0.9),
        ("Once upon a", "640", "1110", 0.2),
    ];
    let mut csv = "participant,context,true_token,other_token,p_true\n".to_string();
    for (c, y, x, p) in rounds {
        csv.push_str(&format!("P,{c},{y},{x},{p}\n"));
    }
    let file = dir.join("answers.csv");
    std::fs::write(&file, &csv).unwrap();
    let out = clozelab(&[
        "perplexity",
        "--model",
        model,
        "--answers",
        file.to_str().unwrap(),
        "--players",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();

    let g1 = brute_force_logprobs("The cat sat on the");
    let g2 = brute_force_logprobs("Once upon a");
    let d = |g: &[f64], y: usize, xs: &[(usize, f64)]| {
        let mean = xs
            .iter()
            .map(|&(x, p)| (g[y] - g[x]).exp() * (1.0 - p) / p)
            .sum::<f64>()
            / xs.len() as f64;
        mean.ln()
    };
    let d1 = d(&g1, 2603, &[(3290, 0.7), (1110, 0.4), (2603, 0.5)]);
    let d2 = d(&g2, 640, &[(262, 0.9), (1110, 0.2)]);
    let loss_g = -(g1[2603] + g2[640]) / 2.0;
    let loss_h = loss_g + (d1 + d2) / 2.0;
    let sigma = (d1 - d2).abs() / 2f64.sqrt() / 2f64.sqrt();
    let close = |key: &str, want: f64| {
        let got = json[key].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-4,
            "{key}: {got} vs brute force {want}"
        );
    };
    assert_eq!(
        (json["pairs"].as_u64(), json["rounds"].as_u64()),
        (Some(2), Some(5))
    );
    close("loss_generator", loss_g);
    close("loss_human", loss_h);
    close("loss_human_low", loss_h - 2.0 * sigma);
    close("loss_human_high", loss_h + 2.0 * sigma);
    let ppl = json["perplexity_human"].as_f64().unwrap();
    assert!(
        (ppl.ln() - loss_h).abs() < 1e-4,
        "perplexity {ppl} vs e^{loss_h}"
    );
    // GPT-2 playing itself unrounded scores exactly its own loss.
    let players = json["model_players"].as_array().unwrap();
    assert_eq!(players.len(), 2);
    let unrounded = &players[0];
    assert_eq!(unrounded["rounded"], false);
    let own = json["loss_generator"].as_f64().unwrap();
    assert!((unrounded["loss_human"].as_f64().unwrap() - own).abs() < 1e-9);
    assert_ne!(players[1]["loss_human"], unrounded["loss_human"]);

    // Bad rows name the file and line.
    let bad = csv.replace("0.4", "1.5");
    std::fs::write(&file, bad).unwrap();
    let out = clozelab(&[
        "perplexity",
        "--model",
        model,
        "--answers",
        file.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("answers.csv: line 3"), "{err}");
    let not_a_token = csv.replace("3290", "\"not one token at all\"");
    std::fs::write(&file, not_a_token).unwrap();
    let out = clozelab(&[
        "perplexity",
        "--model",
        model,
        "--answers",
        file.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 2") && err.contains("other_token"),
        "{err}"
    );
}

#[test]
fn top1_accuracy_and_the_bias_simulation_run_from_the_command_line() {
    let model = common::test_model_dir().to_str().unwrap();
    let dir = common::test_model_dir().join("top1");
    std::fs::create_dir_all(&dir).unwrap();
    let g = brute_force_logprobs("Once upon a");
    let argmax = (0..g.len()).max_by(|&a, &b| g[a].total_cmp(&g[b])).unwrap();
    let lines = [
        format!(
            r#"{{"participant":"A","context":"Once upon a","true_token":{argmax},"guess":"x"}}"#
        ),
        r#"{"participant":"A","context":"Once upon a","true_token":640,"guess":" time"}"#
            .to_string(),
        r#"{"participant":"B","context":"Once upon a","true_token":640,"guess":"time"}"#
            .to_string(),
    ];
    let file = dir.join("answers.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = clozelab(&[
        "top1",
        "--model",
        model,
        "--answers",
        file.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["positions"], 3);
    assert!((json["human_accuracy"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    let model_right = [true, argmax == 640, argmax == 640];
    let want = model_right.iter().filter(|&&b| b).count() as f64 / 3.0;
    assert!((json["model_accuracy"].as_f64().unwrap() - want).abs() < 1e-12);
    assert_eq!(json["participants"][0]["accuracy"], 0.5);

    let out = clozelab(&[
        "perplexity-sim",
        "--model",
        model,
        "--positions",
        "6",
        "--rounds",
        "1,40",
        "--repetitions",
        "30",
        "--generator-temperature",
        "0.2",
        "--truth",
        "generator",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let points = json["points"].as_array().unwrap();
    let bias = |i: usize| points[i]["bias"].as_f64().unwrap();
    assert!(bias(0) < 0.0 && bias(0).abs() > bias(1).abs(), "{points:?}");
}

/// `probes` on the test model: multi-reference JSON Lines in, per-context CSV and the summary
/// figures out, with an error naming the line for a bad input; `table1 --semantic` without a
/// model says what it needs.
#[test]
fn probes_write_tables_and_figures_and_name_bad_lines() {
    let model = common::test_model_dir().to_str().unwrap();
    let lexicon = common::repo_root().join("node_modules/pos/lexicon.js");
    if !lexicon.is_file() {
        eprintln!("skipped: no node_modules/pos (npm ci)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("clozelab-probes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let refs = dir.join("refs.jsonl");
    std::fs::write(
        &refs,
        "{\"context\": \"The cat\", \"references\": [\"sat on the mat\", \"ran away\", \"was hungry\", \"slept all day\"]}\n\n\
         {\"context\": \"She opened the\", \"references\": [\"door\", \"box\", \"window and looked\", \"letter\"]}\n",
    )
    .unwrap();
    let out_dir = dir.join("out");
    let out = clozelab(&[
        "probes",
        "--references",
        refs.to_str().unwrap(),
        "--model",
        model,
        "--samples",
        "4",
        "--strategy",
        "ancestral",
        "--strategy",
        "top-k=5",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("top-k=5") && stdout.contains("semantic"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(out_dir.join("probes_per_context.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("strategy,context,probe,mean_human")
    );
    // Two strategies × two contexts, each with at least the unigram and semantic probes.
    assert!(
        lines.filter(|l| l.contains("lexical 1-gram")).count() == 4,
        "{csv}"
    );
    for figure in [
        "probes-summary-w1.svg",
        "probes-summary-difference.svg",
        "probes-w1-semantic.svg",
    ] {
        let svg = std::fs::read_to_string(out_dir.join(figure)).unwrap();
        assert!(svg.contains("<svg"), "{figure}");
    }

    std::fs::write(
        &refs,
        "{\"context\": \"A\", \"references\": [\"b\", \"c\"]}\nnot json\n",
    )
    .unwrap();
    let out = clozelab(&[
        "probes",
        "--references",
        refs.to_str().unwrap(),
        "--model",
        model,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("line 2"),
        "{stderr}"
    );
    let out = clozelab(&[
        "probes",
        "--provo",
        "x",
        "--references",
        "y",
        "--model",
        model,
        "--out",
        "z",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("either --provo DIR or --references"));
    let out = clozelab(&[
        "probes",
        "--references",
        "y",
        "--model",
        model,
        "--strategy",
        "greedy",
        "--out",
        "z",
    ]);
    assert!(!out.status.success());
    let out = clozelab(&["table1", "--provo", "x", "--semantic"]);
    assert!(!out.status.success());
    std::fs::remove_dir_all(&dir).ok();
}
