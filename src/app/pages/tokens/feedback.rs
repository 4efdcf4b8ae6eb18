//! What the player learns after each round: the true token, GPT-2's view of it, their score.

use leptos::prelude::*;

use super::controller::{LastRound, use_token_game};
use crate::analysis::perplexity::{PTrue, reward};
use crate::game::tokens::show_token;
use crate::game::tokens::top1::running_score;
use crate::game::tokens::two_token::total_reward;
use crate::runtime::distributions::TokenStats;

fn shown(text: &str) -> String {
    show_token(text.as_bytes())
}

fn percent(p: f64) -> String {
    if p >= 0.001 {
        format!("{:.1} %", 100.0 * p)
    } else {
        format!("{p:.1e}")
    }
}

fn top_list(stats: &TokenStats) -> impl IntoView + use<> {
    let rows = stats
        .top
        .iter()
        .map(|t| {
            view! {
                <li>
                    <span class="token">{shown(&t.text)}</span>
                    " "
                    {percent(t.logprob.exp())}
                </li>
            }
        })
        .collect_view();
    view! {
        <ol class="gpt2-top" data-testid="gpt2-top">
            {rows}
        </ol>
    }
}

#[component]
pub fn RoundFeedback() -> impl IntoView {
    let game = use_token_game();
    move || {
        let last = game.last.get()?;
        Some(match last {
            LastRound::Top1(r, stats) => {
                let verdict = if r.correct {
                    "Right!"
                } else {
                    "Not this time."
                };
                let guess = match (r.guess_rank, r.g_guess) {
                    (Some(rank), Some(g)) => {
                        format!("GPT-2 ranks your guess {rank} ({}).", percent(g))
                    }
                    _ => "Your guess is not a single GPT-2 token.".to_string(),
                };
                view! {
                    <section class="feedback" data-testid="token-feedback" aria-live="polite">
                        <h3>"Last round"</h3>
                        <p>
                            <strong>{verdict}</strong>
                            " The next token was "
                            <span class="token" data-testid="true-token">
                                {shown(&r.true_token_text)}
                            </span>
                            {format!(
                                " (GPT-2: {}). You typed ",
                                r.g_true.map(percent).unwrap_or_default(),
                            )}
                            <span class="token">{shown(&r.guess)}</span>
                            ". "
                            {guess}
                        </p>
                        {(!game.experiment)
                            .then(|| {
                                view! {
                                    <p>"GPT-2's most likely next tokens:"</p>
                                    {top_list(&stats)}
                                }
                            })}
                    </section>
                }
                .into_any()
            }
            LastRound::TwoToken(r, stats) => {
                let gpt2 = PTrue::from_model(r.g_true.ln(), r.g_other.ln());
                let side = if r.true_left { "left" } else { "right" };
                view! {
                    <section class="feedback" data-testid="token-feedback" aria-live="polite">
                        <h3>"Last round"</h3>
                        <p>
                            "The original was the " {side} " token, "
                            <span class="token" data-testid="true-token">
                                {shown(&r.true_token_text)}
                            </span> {format!(" (GPT-2: {}); the other, ", percent(r.g_true))}
                            <span class="token">{shown(&r.other_token_text)}</span>
                            {format!(", was drawn by GPT-2 ({}).", percent(r.g_other))}
                        </p>
                        <p data-testid="round-reward">
                            {format!(
                                "You gave the original {:.0} %: {:+.1} points. GPT-2 would have said {:.0} %: {:+.1} points.",
                                100.0 * r.p_true,
                                r.reward,
                                100.0 * gpt2.get(),
                                reward(r.g_true, gpt2),
                            )}
                        </p>
                        {(!game.experiment).then(|| top_list(&stats))}
                    </section>
                }
                .into_any()
            }
        })
    }
}

/// The running score beside GPT-2's (practice rounds left out).
#[component]
pub fn RunningScore() -> impl IntoView {
    let game = use_token_game();
    move || match game.game {
        crate::game::study::GameKind::TwoToken => {
            let records = game.two_token.get();
            let gpt2: f64 = records
                .iter()
                .filter(|r| !r.practice)
                .map(|r| reward(r.g_true, PTrue::from_model(r.g_true.ln(), r.g_other.ln())))
                .sum::<f64>()
                + 0.0;
            view! {
                <p class="score" data-testid="running-score">
                    {format!(
                        "Score: you {:+.1} · GPT-2 {:+.1} (over {} scored rounds)",
                        total_reward(&records),
                        gpt2,
                        records.iter().filter(|r| !r.practice).count(),
                    )}
                </p>
            }
            .into_any()
        }
        _ => {
            let (you, gpt2, n) = running_score(&game.top1.get());
            view! {
                <p class="score" data-testid="running-score">
                    {format!("Top-1 accuracy: you {you}/{n} · GPT-2 {gpt2}/{n}")}
                </p>
            }
            .into_any()
        }
    }
}
