//! Whether the app's own server holds a model folder, asked without a request that could
//! answer 404: an earlier visit's cache, else the build's list of its files.

/// Whether the app's server has a model in `folder` (e.g. `/models/gpt2/`): the build's list of its files says
/// (so that no page asks for a folder that is not there, and logs a 404); a host without the
/// list is asked once.
pub async fn is_served(folder: &str) -> bool {
    let config = format!("{folder}config.json");
    if super::fetch::is_cached(&config).await {
        return true;
    }
    let list_url = format!(
        "{}{}",
        crate::app::web::jatos_client::app_root(),
        crate::game::packages::package::APP_FILES_LIST
    );
    match super::fetch::fetch_text_uncached(&list_url, crate::data::served_file::FileKind::Json)
        .await
    {
        Ok(list) => crate::game::packages::package::parse_file_list(&list)
            .is_ok_and(|files| files.iter().any(|f| f == config.trim_start_matches('/'))),
        Err(_) => super::fetch::exists(&config).await,
    }
}
