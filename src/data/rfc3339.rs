//! Milliseconds since the Unix epoch of an RFC 3339 time as the browser writes it
//! (`Date.toISOString`: `2026-11-28T00:08:09.123Z`, or with a `±hh:mm` offset). Hand-written:
//! the one subtraction it serves (time since a run's first trial) does not warrant a date
//! crate in every build (none is in clozelab's tree); replace it if one comes in.

/// The time `text` names, in ms since 1970-01-01T00:00:00Z; `None` if it is not RFC 3339.
///
/// ```
/// use clozelab::data::rfc3339::epoch_ms;
/// assert_eq!(epoch_ms("1970-01-01T00:00:01Z"), Some(1000.0));
/// assert_eq!(epoch_ms("2026-11-28T00:08:09.5Z"), Some(1_795_824_489_500.0));
/// assert_eq!(epoch_ms("2026-11-28T01:08:09.5+01:00"), epoch_ms("2026-11-28T00:08:09.5Z"));
/// assert_eq!(epoch_ms("yesterday"), None);
/// ```
pub fn epoch_ms(text: &str) -> Option<f64> {
    let text = text.trim();
    let (date, rest) = text.split_once(['T', 't', ' '])?;
    let mut ymd = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (ymd.next()??, ymd.next()??, ymd.next()??);
    let zone_at = rest.find(['Z', 'z', '+', '-'])?;
    let (clock, zone) = rest.split_at(zone_at);
    let mut hms = clock.splitn(3, ':');
    let hour: i64 = hms.next()?.parse().ok()?;
    let minute: i64 = hms.next()?.parse().ok()?;
    let second: f64 = hms.next()?.parse().ok()?;
    let offset_minutes = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let (h, m) = zone[1..].split_once(':')?;
            sign * (h.parse::<i64>().ok()? * 60 + m.parse::<i64>().ok()?)
        }
    };
    let valid = (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && (0..24).contains(&hour)
        && (0..60).contains(&minute)
        && (0.0..61.0).contains(&second);
    if !valid {
        return None;
    }
    let minutes = days_from_civil(year, month, day) * 1440 + hour * 60 + minute - offset_minutes;
    Some(minutes as f64 * 60_000.0 + second * 1000.0)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}
