//! The texts participants read, as a context: a study provides its language's set (with its
//! overrides) and sets the page's `lang`; everything else reads English.

use leptos::prelude::*;

use crate::game::design::participant_texts::{ParticipantTexts, Say};

/// The study's texts, shared by every component a participant sees.
#[derive(Clone, Copy)]
pub struct TextsContext(StoredValue<ParticipantTexts>);

impl TextsContext {
    pub fn get(self, say: Say) -> String {
        self.0.with_value(|t| t.get(say).to_string())
    }

    pub fn fill(self, say: Say, values: &[(&str, &str)]) -> String {
        self.0.with_value(|t| t.fill(say, values))
    }

    /// `f` of the texts themselves (to cut one at its placeholders).
    pub fn with<R>(self, f: impl FnOnce(&ParticipantTexts) -> R) -> R {
        self.0.with_value(f)
    }
}

/// Provides `texts` to the components below, and marks the page as written in their language.
pub fn provide_texts_context(texts: ParticipantTexts) -> TextsContext {
    if let Some(root) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute("lang", texts.language());
        // The app around a study (the Study page after a preview) is in English.
        on_cleanup(move || {
            let _ = root.set_attribute("lang", "en");
        });
    }
    let context = TextsContext(StoredValue::new(texts));
    provide_context(context);
    context
}

/// The texts in context, or English outside a study.
pub fn use_texts() -> TextsContext {
    use_context::<TextsContext>()
        .unwrap_or_else(|| TextsContext(StoredValue::new(ParticipantTexts::english())))
}
