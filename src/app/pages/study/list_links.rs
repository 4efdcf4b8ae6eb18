//! Outside JATOS, how balanced the lists will be: a participant's list comes from a hash of
//! their id, which balances only on average (the page says by how much for a sample size the
//! researcher types); one link per list (`?list=…`) balances exactly.

use leptos::prelude::*;

use super::use_study_draft;
use crate::game::design::lists::hash_spread;

#[component]
pub(super) fn ListLinks() -> impl IntoView {
    let draft = use_study_draft();
    let participants = RwSignal::new(40usize);
    let lists = move || {
        draft
            .config
            .with(|c| c.lists.iter().map(|l| l.name.clone()).collect::<Vec<_>>())
    };
    move || {
        let names = lists();
        (!names.is_empty()).then(|| {
            let k = names.len();
            let spread = move || {
                let n = participants.get();
                hash_spread(n, k).map_or_else(String::new, |sd| {
                    format!(
                        "With {n} participants and {k} lists, a list gets {:.1} on average, give or \
                         take {sd:.1} (one standard deviation): lists can differ by several \
                         participants.",
                        n as f64 / k as f64
                    )
                })
            };
            view! {
                <div class="list-links" data-testid="list-links">
                    <h4>"Lists outside JATOS"</h4>
                    <p>
                        "Inside JATOS, each new participant gets the list fewest have completed. Elsewhere (Prolific with a static host, a lab computer) the list comes from a hash of the participant's id, which balances only on average."
                    </p>
                    <label>
                        "Participants you plan: "
                        <input
                            type="number"
                            min="1"
                            data-testid="list-links-participants"
                            prop:value=move || participants.get().to_string()
                            on:input=move |ev| {
                                if let Ok(n) = event_target_value(&ev).parse() {
                                    participants.set(n);
                                }
                            }
                        />
                    </label>
                    <p data-testid="list-links-spread">{spread}</p>
                    <p>
                        "For exact balance, recruit each list through its own link (e.g. one Prolific study per list), adding its parameter to the study's address:"
                    </p>
                    <ul>
                        {names
                            .into_iter()
                            .map(|name| {
                                view! {
                                    <li>
                                        <code data-testid="list-link">
                                            {format!("?list={name}")}
                                        </code>
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                </div>
            }
        })
    }
}
