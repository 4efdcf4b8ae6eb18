//! Beside the package buttons: which build of the app the packages would carry, read from the
//! build's record; for a development build (or one without a record), what participants would
//! get and how to make the optimised one.

use leptos::prelude::*;

use crate::app::web::fetch::fetch_text_uncached;
use crate::app::web::jatos_client::app_root;
use crate::data::served_file::FileKind;
use crate::game::packages::build_record::{BUILD_RECORD, BuildRecordError, optimised_build};

/// The record's text, `None` where this server has none.
async fn served_record() -> Option<String> {
    fetch_text_uncached(&format!("{}{BUILD_RECORD}", app_root()), FileKind::Json)
        .await
        .ok()
}

#[component]
pub(super) fn BuildNotice() -> impl IntoView {
    let record = LocalResource::new(served_record);
    move || {
        record
            .get()
            .map(|text| match optimised_build(text.as_deref()) {
                Ok(build) => view! { <p data-testid="study-build">{format!("The packages carry {}.", build.describe())}</p> }
                .into_any(),
                Err(e) => {
                let (heading, text) = match &e {
                    BuildRecordError::Development(build) => (
                        "Not for participants yet.",
                        format!(
                            "The packages would carry {build}: participants would download a \
                             larger app and run GPT-2 several times slower."
                        ),
                    ),
                    other => ("Which build is this?", format!("{other}.")),
                };
                view! {
                    <p class="warning" role="status" data-testid="study-build-warning">
                        <strong>{heading}</strong>
                        " "
                        {text}
                        " For the optimised build, stop the app and start it again with "
                        <code>"bash scripts/app.sh --release"</code>
                        " (the first time it builds the optimised app, about 45 minutes on a 2-core machine), then \
                         package from that page."
                    </p>
                }
                    .into_any()
            }
        })
    }
}
