//! What one store holds ([`HostState`]): the provider the component's import
//! is served from, the resources handed to the guest and their cap, an empty
//! WASI context, the memory limits, and what happened during the current call
//! that earns it time past the deadline.

use crate::provider::DynProvider;
use dsh_fs_core::{ErrorCode, FsError};
use std::sync::Arc;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime::{StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// What a store holds: the provider and the resources handed to the guest.
pub(crate) struct HostState {
    /// The provider the import is served from.
    pub(crate) provider: Arc<DynProvider>,
    /// The resources handed to the guest (only [`HostState::hand_out`] adds
    /// to it, only [`HostState::take_back`] removes from it).
    pub(crate) table: ResourceTable,
    max_resources: usize,
    live_resources: usize,
    wasi: WasiCtx,
    limits: StoreLimits,
    /// The display path of a change committed during the current call.
    committed: Option<String>,
    /// Whether a provider gave up at the deadline during the current call
    /// (`busy`, `aborted`): its answer, that nothing changed, is true and
    /// must reach the model, so it gets the grace period too.
    gave_up: bool,
    /// Whether the current call already had its grace period.
    grace_used: bool,
}

impl HostState {
    /// A store's state serving `provider`, with at most `memory_bytes` of
    /// linear memory and `max_resources` open provider resources. WASI is
    /// linked against an empty context, which grants nothing.
    pub(crate) fn new(
        provider: Arc<DynProvider>,
        memory_bytes: usize,
        max_resources: usize,
    ) -> Self {
        HostState {
            provider,
            max_resources,
            live_resources: 0,
            table: ResourceTable::new(),
            wasi: WasiCtx::builder().build(),
            limits: StoreLimitsBuilder::new()
                .memory_size(memory_bytes)
                .instances(16)
                .tables(64)
                .memories(16)
                .trap_on_grow_failure(true)
                .build(),
            committed: None,
            gave_up: false,
            grace_used: false,
        }
    }

    /// The limits the store's limiter enforces.
    pub(crate) fn store_limits(&mut self) -> &mut StoreLimits {
        &mut self.limits
    }

    /// Forgets what the previous call committed or gave up.
    pub(crate) fn begin_call(&mut self) {
        (self.committed, self.gave_up, self.grace_used) = (None, false, false);
    }

    /// Whether the call may run past its deadline, once: a change committed
    /// (or a provider gave up at the deadline), and the component must be
    /// able to say so.
    pub(crate) fn take_grace(&mut self) -> bool {
        if (self.committed.is_some() || self.gave_up) && !self.grace_used {
            self.grace_used = true;
            return true;
        }
        false
    }

    /// The display path of a change committed during the call, if any.
    pub(crate) fn take_committed(&mut self) -> Option<String> {
        self.committed.take()
    }

    /// Records what a mutation's outcome means for the call's deadline: a
    /// commit, or a provider that gave up at it.
    pub(crate) fn note_mutation<T>(&mut self, shown: &str, done: &Result<T, FsError>) {
        match done {
            Ok(_) => self.committed = Some(shown.to_owned()),
            Err(e) if matches!(e.code, ErrorCode::Busy | ErrorCode::Aborted) => {
                self.gave_up = true;
            }
            Err(_) => {}
        }
    }

    /// Hands a resource to the guest, trapping once it holds too many: a
    /// guest that never drops its targets cannot grow the host's memory.
    pub(crate) fn hand_out<T: Send + 'static>(
        &mut self,
        value: T,
    ) -> wasmtime::Result<Resource<T>> {
        if self.live_resources >= self.max_resources {
            wasmtime::bail!(
                "the component holds more than {} open resources",
                self.max_resources
            );
        }
        self.live_resources += 1;
        Ok(self.table.push(value)?)
    }

    /// Takes back a resource the guest dropped.
    pub(crate) fn take_back<T: 'static>(&mut self, r: Resource<T>) -> wasmtime::Result<()> {
        self.table.delete(r)?;
        self.live_resources -= 1;
        Ok(())
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}
