//! Adaptive norming on the Study page: the precision target (the target word's interval width,
//! the unseen mass, the share of contexts) and where participants go once it is met. The
//! loader's checks say when the design cannot state it (fewer than two lists, another game).

use leptos::prelude::*;

use super::use_study_draft;
use crate::app::components::error_note::ErrorNote;
use crate::game::design::study_draft::set_adaptive_norming;

#[component]
pub(super) fn NormingFields() -> impl IntoView {
    let draft = use_study_draft();
    let initial = draft.config.with_untracked(|c| c.adaptive_norming.clone());
    let text = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    let enabled = RwSignal::new(initial.is_some());
    let width = RwSignal::new(
        initial
            .as_ref()
            .map_or("0.3".into(), |n| text(n.max_interval_width)),
    );
    let unseen = RwSignal::new(
        initial
            .as_ref()
            .map_or(String::new(), |n| text(n.max_unseen_mass)),
    );
    let share = RwSignal::new(
        initial
            .as_ref()
            .map_or("90".into(), |n| (n.share * 100.0).to_string()),
    );
    let full_url = RwSignal::new(initial.and_then(|n| n.full_url).unwrap_or_default());
    let problem = RwSignal::new(None::<String>);
    let apply = move || {
        let mut set = Ok(());
        draft.config.update(|c| {
            set = set_adaptive_norming(
                c,
                enabled.get_untracked(),
                &width.get_untracked(),
                &unseen.get_untracked(),
                &share.get_untracked(),
                &full_url.get_untracked(),
            )
        });
        problem.set(set.err());
    };
    let field = move |id: &'static str,
                      label: &'static str,
                      value: RwSignal<String>,
                      placeholder: &'static str| {
        view! {
            <label for=id>{label}</label>
            <input
                id=id
                data-testid=id
                type="text"
                placeholder=placeholder
                prop:value=move || value.get()
                on:input=move |ev| {
                    value.set(event_target_value(&ev));
                    apply();
                }
            />
        }
    };
    view! {
        <details class="adaptive-norming" open=move || enabled.get()>
            <summary>"Adaptive norming (optional): stop when the norms are precise enough"</summary>
            <p class="hint">
                "Inside JATOS, each new participant gets the list whose contexts are furthest from \
                 the target (every list first gets 10 participants), and once every context meets \
                 it the study is full. Outside JATOS, serve the state file the Analysis page makes \
                 beside study.json. See docs/norming.md for what it saves."
            </p>
            <label class="inline">
                <input
                    type="checkbox"
                    data-testid="study-norming-enabled"
                    prop:checked=move || enabled.get()
                    on:change=move |ev| {
                        enabled.set(event_target_checked(&ev));
                        apply();
                    }
                />
                " Assign participants by the answers so far"
            </label>
            {field(
                "study-norming-width",
                "Widest 95% interval of a target word's cloze probability",
                width,
                "0.3",
            )}
            {field(
                "study-norming-unseen",
                "Most probability on words nobody gave yet (optional)",
                unseen,
                "0.2",
            )}
            {field("study-norming-share", "Share of contexts that must meet it, in %", share, "90")}
            {field(
                "study-norming-full-url",
                "Where participants go once it is met (optional)",
                full_url,
                "https://app.prolific.com/…",
            )}
            <ErrorNote message=problem />
        </details>
    }
}
