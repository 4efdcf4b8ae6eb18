//! A product helper: the worker's wasm started under [`HELPER_NAME`] by the inference worker
//! ([`super::helper_pool`]). It takes the shared memory and its parts of the packed weights
//! by message, then computes the pieces of its columns it claims of each product the worker
//! posts in shared memory, until the worker stops it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Atomics, Float32Array, Int32Array, Reflect, SharedArrayBuffer};
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use super::helper_messages::HELPER_NAME;
use super::shared_job::{
    CAPACITY, DONE, FAILED, FINISHED, GENERATION, HELPERS_ASLEEP, INPUT_BYTES, LENGTHS, ROWS, STOP,
    WEIGHT, WORKER_ASLEEP, claim_piece, job_tag, output_bytes, wait_for_change, wake_sleepers,
};
use crate::model::ops::panel_product::PanelWeight;
use crate::model::ops::product_helpers::{CHUNKS, WeightPart, chunk_ranges};

/// Whether this worker was started as a product helper.
pub fn is_helper() -> bool {
    js_sys::global()
        .dyn_into::<DedicatedWorkerGlobalScope>()
        .is_ok_and(|scope| scope.name() == HELPER_NAME)
}

#[derive(Default)]
struct Helper {
    memory: Option<(SharedArrayBuffer, usize)>,
    parts: HashMap<usize, PanelWeight>,
}

/// Listens for the worker's messages, and says it is ready to take them.
pub fn run() {
    let Ok(scope) = js_sys::global().dyn_into::<DedicatedWorkerGlobalScope>() else {
        return;
    };
    let helper = Rc::new(RefCell::new(Helper::default()));
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        if let Err(e) = receive(&helper, &event.data()) {
            web_sys::console::error_1(&format!("product helper: {e}").into());
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The helper listens for as long as it lives.
    on_message.forget();
    let _ = scope.post_message(&JsValue::from_str("ready"));
}

fn field(message: &JsValue, key: &str) -> JsValue {
    Reflect::get(message, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn number(message: &JsValue, key: &str) -> Result<usize, String> {
    field(message, key)
        .as_f64()
        .map(|v| v as usize)
        .ok_or_else(|| format!("a message without {key}"))
}

fn receive(helper: &Rc<RefCell<Helper>>, message: &JsValue) -> Result<(), String> {
    match field(message, "kind").as_string().as_deref() {
        Some("join") => {
            let memory = field(message, "sab")
                .dyn_into::<SharedArrayBuffer>()
                .map_err(|_| "no shared memory".to_string())?;
            helper.borrow_mut().memory = Some((memory, number(message, "helper")?));
        }
        Some("share") => {
            let panels = field(message, "panels")
                .dyn_into::<Float32Array>()
                .map_err(|_| "a part without panels".to_string())?
                .to_vec();
            let bias = field(message, "bias")
                .dyn_into::<Float32Array>()
                .ok()
                .map(|bias| bias.to_vec());
            let part = PanelWeight::from_part(WeightPart {
                n_in: number(message, "nIn")?,
                n_out: number(message, "nOut")?,
                panels,
                bias,
            })
            .map_err(|e| e.to_string())?;
            helper
                .borrow_mut()
                .parts
                .insert(number(message, "weight")?, part);
        }
        Some("serve") => serve(&helper.borrow())?,
        other => return Err(format!("an unknown message {other:?}")),
    }
    Ok(())
}

/// Computes the pieces it claims of each product the worker posts until it says stop
/// (blocking: the helper needs no messages once it has its parts).
fn serve(helper: &Helper) -> Result<(), String> {
    let (memory, index) = helper
        .memory
        .as_ref()
        .ok_or("asked to serve before joining")?;
    let index = *index;
    let control = Int32Array::new_with_byte_offset_and_length(memory, 0, INPUT_BYTES / 4);
    // Jobs are numbered from 1: a helper that starts late still sees the first one pending.
    let mut seen = 0;
    loop {
        wait_for_change(&control, GENERATION, seen, HELPERS_ASLEEP, f64::INFINITY);
        let generation = Atomics::load(&control, GENERATION).map_err(|_| "no generation")?;
        if generation == seen {
            continue;
        }
        seen = generation;
        if Atomics::load(&control, STOP).unwrap_or(1) != 0 {
            return Ok(());
        }
        let tag = job_tag(generation);
        // Read before the first claim; a claim of this job's tag means the worker is still on
        // it (it moves on only once every piece is claimed and its claimers have answered).
        let weight = Atomics::load(&control, WEIGHT).unwrap_or(-1) as usize;
        let rows = Atomics::load(&control, ROWS).unwrap_or(0) as usize;
        let part = helper.parts.get(&weight).filter(|part| {
            let [n_in, n_out] = part.dims();
            rows * n_in.max(n_out) <= CAPACITY
        });
        let pieces = part.map_or(CHUNKS, |part| chunk_ranges(part.panel_count()).len());
        let Some(first) = claim_piece(&control, index, tag, pieces) else {
            // The worker claimed every piece: nothing to answer.
            continue;
        };
        match part {
            Some(part) => {
                let input = Float32Array::new_with_byte_offset_and_length(
                    memory,
                    INPUT_BYTES,
                    (rows * part.dims()[0]) as u32,
                )
                .to_vec();
                let mut next = Some(first);
                part.pieces_product(
                    &input,
                    rows,
                    || {
                        next.take()
                            .or_else(|| claim_piece(&control, index, tag, pieces))
                    },
                    |at, values| {
                        Float32Array::new_with_byte_offset_and_length(
                            memory,
                            output_bytes(index, CAPACITY) + (at * 4) as u32,
                            values.len() as u32,
                        )
                        .copy_from(values)
                    },
                );
                let written = (rows * part.dims()[1]) as i32;
                let _ = Atomics::store(&control, LENGTHS + index as u32, written);
            }
            None => {
                let _ = Atomics::store(&control, FAILED, index as i32 + 1);
            }
        }
        let _ = Atomics::store(&control, FINISHED + index as u32, tag);
        let _ = Atomics::add(&control, DONE, 1);
        wake_sleepers(&control, DONE, WORKER_ASLEEP);
    }
}
