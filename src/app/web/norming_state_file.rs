//! Adaptive norming outside JATOS: the state file the researcher serves beside the study's
//! config (`clozelab norming-state`) read at a participant's start, and their list drawn from
//! it ([`NormingPlan::draw`]).

use crate::app::web::fetch::fetch_text_uncached;
use crate::data::served_file::FileKind;
use crate::game::design::adaptive_norming::{NormingStateFile, STATE_FILE};
use crate::game::design::lists::LIST_PARAM;
use crate::game::design::study::StudyConfig;
use crate::game::run::norming_state::NormingPlan;
use crate::rng::{SplitMix64, stable_hash};

/// Sets `config`'s adaptive norming assignment for this participant from the state file beside
/// `study_url`. Nothing for a study without the option, inside JATOS (the batch session
/// decides there) or when the link names a list. No state file served yet reads as no answers
/// so far; one that cannot be read likewise, said in the console and in the run's reason.
pub async fn assign_from_state_file(config: &mut StudyConfig, study_url: &str) {
    if config.jatos.is_some() || config.preview {
        return;
    }
    let Some(plan) = NormingPlan::of(config) else {
        return;
    };
    let params = super::query_params();
    if params.contains_key(LIST_PARAM) {
        return;
    }
    let Ok(participant) =
        config.participant_id(&params, &super::participant::local_participant_id())
    else {
        return;
    };
    let folder = study_url
        .rsplit_once('/')
        .map_or(String::new(), |(f, _)| format!("{f}/"));
    let state = match fetch_text_uncached(&format!("{folder}{STATE_FILE}"), FileKind::Json).await {
        Ok(text) => serde_json::from_str::<NormingStateFile>(&text).unwrap_or_else(|e| {
            leptos::logging::warn!("{STATE_FILE} is not adaptive norming's state: {e}");
            NormingStateFile {
                written_at: format!("never ({STATE_FILE} could not be read: {e})"),
                ..NormingStateFile::default()
            }
        }),
        Err(_) => NormingStateFile {
            written_at: format!("never (no {STATE_FILE} served yet)"),
            ..NormingStateFile::default()
        },
    };
    // A uniform draw in [0, 1) fixed by the participant's id, so a reload gets the same list.
    let u = (SplitMix64::new(stable_hash(&format!("norming:{participant}"))).next_u64() >> 11)
        as f64
        / (1u64 << 53) as f64;
    config.norming_assignment = Some(plan.draw(&state, u));
}
