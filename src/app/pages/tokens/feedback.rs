//! What the player learns after each round: the true token, GPT-2's view of it, their score.

use leptos::prelude::*;

use super::controller::{LastRound, use_token_game};
use crate::analysis::perplexity::{PTrue, reward};
use crate::app::texts::TextsContext;
use crate::game::design::participant_texts::{Say, TextPart};
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

/// The study's text `text` with an element in each placeholder (`slot` gives it by name).
fn sentence(say: TextsContext, text: Say, slot: impl Fn(&str) -> AnyView) -> Vec<AnyView> {
    say.with(|t| {
        t.parts(text)
            .into_iter()
            .map(|part| match part {
                TextPart::Text(words) => words.to_string().into_any(),
                TextPart::Slot(name) => slot(name),
            })
            .collect()
    })
}

#[component]
pub fn RoundFeedback() -> impl IntoView {
    let game = use_token_game();
    let say = game.say;
    move || {
        let last = game.last.get()?;
        Some(match last {
            LastRound::Top1(r, stats) => {
                let verdict = say.get(if r.correct {
                    Say::RoundRight
                } else {
                    Say::RoundWrong
                });
                let rank = match (r.guess_rank, r.g_guess) {
                    (Some(rank), Some(g)) => say.fill(
                        Say::Top1Rank,
                        &[("rank", &rank.to_string()), ("gpt2_guess", &percent(g))],
                    ),
                    _ => say.get(Say::Top1NotAToken),
                };
                let g_true = r.g_true.map(percent).unwrap_or_default();
                let text = sentence(say, Say::Top1Feedback, |name| match name {
                    "verdict" => view! { <strong>{verdict.clone()}</strong> }.into_any(),
                    "true_token" => view! {
                        <span class="token" data-testid="true-token">
                            {shown(&r.true_token_text)}
                        </span>
                    }
                    .into_any(),
                    "gpt2_true" => g_true.clone().into_any(),
                    "guess" => view! { <span class="token">{shown(&r.guess)}</span> }.into_any(),
                    "rank" => rank.clone().into_any(),
                    other => format!("{{{other}}}").into_any(),
                });
                view! {
                    <section class="feedback" data-testid="token-feedback" aria-live="polite">
                        <h3>{say.get(Say::LastRound)}</h3>
                        <p>{text}</p>
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
                let side = say.get(if r.true_left {
                    Say::SideLeft
                } else {
                    Say::SideRight
                });
                let text = sentence(say, Say::TwoTokenFeedback, |name| match name {
                    "side" => side.clone().into_any(),
                    "true_token" => view! {
                        <span class="token" data-testid="true-token">
                            {shown(&r.true_token_text)}
                        </span>
                    }
                    .into_any(),
                    "gpt2_true" => percent(r.g_true).into_any(),
                    "other_token" => {
                        view! { <span class="token">{shown(&r.other_token_text)}</span> }.into_any()
                    }
                    "gpt2_other" => percent(r.g_other).into_any(),
                    other => format!("{{{other}}}").into_any(),
                });
                let points = say.fill(
                    Say::TwoTokenReward,
                    &[
                        ("you_percent", &format!("{:.0} %", 100.0 * r.p_true)),
                        ("you_points", &format!("{:+.1}", r.reward)),
                        ("gpt2_percent", &format!("{:.0} %", 100.0 * gpt2.get())),
                        ("gpt2_points", &format!("{:+.1}", reward(r.g_true, gpt2))),
                    ],
                );
                view! {
                    <section class="feedback" data-testid="token-feedback" aria-live="polite">
                        <h3>{say.get(Say::LastRound)}</h3>
                        <p>{text}</p>
                        <p data-testid="round-reward">{points}</p>
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
    let say = game.say;
    move || match game.game {
        crate::game::design::study::GameKind::TwoToken => {
            let records = game.two_token.get();
            let gpt2: f64 = records
                .iter()
                .filter(|r| !r.practice)
                .map(|r| reward(r.g_true, PTrue::from_model(r.g_true.ln(), r.g_other.ln())))
                .sum::<f64>()
                + 0.0;
            view! {
                <p class="score" data-testid="running-score">
                    {say
                        .fill(
                            Say::ScoreTwoToken,
                            &[
                                ("you", &format!("{:+.1}", total_reward(&records))),
                                ("gpt2", &format!("{gpt2:+.1}")),
                                (
                                    "rounds",
                                    &records.iter().filter(|r| !r.practice).count().to_string(),
                                ),
                            ],
                        )}
                </p>
            }
            .into_any()
        }
        _ => {
            let (you, gpt2, n) = running_score(&game.top1.get());
            view! {
                <p class="score" data-testid="running-score">
                    {say
                        .fill(
                            Say::ScoreTop1,
                            &[
                                ("you", &you.to_string()),
                                ("gpt2", &gpt2.to_string()),
                                ("rounds", &n.to_string()),
                            ],
                        )}
                </p>
            }
            .into_any()
        }
    }
}
