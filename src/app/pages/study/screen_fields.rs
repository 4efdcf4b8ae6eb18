//! What participants read and where they go: consent, instructions, the completion code and
//! redirect, the participant id's URL parameter, and where results are sent (or that they stay
//! in the browser).

use leptos::prelude::*;

use super::fields::{CheckField, OptionalTextField, TextField};

#[component]
pub(super) fn ScreenFields() -> impl IntoView {
    view! {
        <fieldset>
            <legend>"Participants"</legend>
            <TextField
                label="Consent (shown first; empty: no consent screen)"
                id="study-consent"
                rows=3
                get=|c| c.consent.clone()
                set=|c, v| c.consent = v
            />
            <TextField
                label="Instructions"
                id="study-instructions"
                rows=3
                get=|c| c.instructions.clone()
                set=|c, v| c.instructions = v
            />
            <TextField
                label="Completion code (shown at the end)"
                id="study-completion-code"
                get=|c| c.completion_code.clone()
                set=|c, v| c.completion_code = v
            />
            <OptionalTextField
                label="Redirect at the end (e.g. Prolific's completion URL)"
                id="study-redirect"
                placeholder="https://app.prolific.com/submissions/complete?cc=…"
                field=|c| &c.redirect_url
                field_mut=|c| &mut c.redirect_url
            />
            <OptionalTextField
                label="Where to send a participant who does not agree or withdraws (e.g. Prolific's no-consent URL)"
                id="study-decline"
                placeholder="https://app.prolific.com/submissions/complete?cc=…"
                field=|c| &c.decline_url
                field_mut=|c| &mut c.decline_url
            />
            <OptionalTextField
                label="URL parameter with the participant's id"
                id="study-participant-param"
                placeholder="PROLIFIC_PID"
                field=|c| &c.participant_param
                field_mut=|c| &mut c.participant_param
            />
            <OptionalTextField
                label="Send results to (a path on the study's own server, e.g. clozelab serve's, or its https:// address; not used in JATOS)"
                id="study-submit-url"
                placeholder="/submit"
                field=|c| &c.submit_url
                field_mut=|c| &mut c.submit_url
            />
            <CheckField
                label="Also send each answer as it is saved"
                id="study-send-each"
                get=|c| c.send_each_response
                field_mut=|c| &mut c.send_each_response
            />
            <CheckField
                label="No server: answers stay in each participant's browser (a lab computer, where you download them)"
                id="study-answers-in-browser"
                get=|c| c.answers_in_browser
                field_mut=|c| &mut c.answers_in_browser
            />
        </fieldset>
    }
}
