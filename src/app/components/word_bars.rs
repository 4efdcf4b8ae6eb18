//! Figure 1 of Ilia & Aziz (2024) as HTML: the top words of the humans' and GPT-2's next-word
//! distributions as bars side by side, the participant's own word marked. Plain text nodes
//! only: words come from users and files and are never interpreted as markup.

use std::collections::BTreeMap;

use leptos::prelude::*;

/// Top `n` words of a distribution, most probable first (ties alphabetical).
pub fn top_words(dist: &BTreeMap<String, f64>, n: usize) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = dist.iter().map(|(w, p)| (w.clone(), *p)).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(n);
    v
}

#[component]
pub fn WordBars(
    /// Heading, e.g. "Humans (40 responses)".
    title: String,
    /// Normalised word → probability.
    dist: BTreeMap<String, f64>,
    /// The participant's normalised word.
    mine: String,
    /// The true next word, normalised.
    truth: String,
    testid: &'static str,
) -> impl IntoView {
    let rows = top_words(&dist, 15);
    view! {
        <figure class="word-bars" data-testid=testid>
            <figcaption>{title}</figcaption>
            <ol>
                {rows
                    .into_iter()
                    .map(|(word, p)| {
                        let width = format!("width: {:.1}%", (p * 100.0).clamp(0.5, 100.0));
                        let class = match (word == mine, word == truth) {
                            (true, true) => "bar mine truth",
                            (true, false) => "bar mine",
                            (false, true) => "bar truth",
                            _ => "bar",
                        };
                        let label = word.clone();
                        view! {
                            <li class=class data-word=label data-prob=format!("{p}")>
                                <span class="word">{word}</span>
                                <span class="track">
                                    <span class="fill" style=width></span>
                                </span>
                                <span class="pct">{format!("{:.0}%", p * 100.0)}</span>
                            </li>
                        }
                    })
                    .collect_view()}
            </ol>
        </figure>
    }
}
