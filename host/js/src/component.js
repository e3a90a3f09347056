// The component of this process or page, loaded once, with preview2-shim as
// its WASI (resolved by Node, or by the page's import map).

import * as cli from '@bytecodealliance/preview2-shim/cli';
import * as clocks from '@bytecodealliance/preview2-shim/clocks';
import * as io from '@bytecodealliance/preview2-shim/io';
import * as random from '@bytecodealliance/preview2-shim/random';
import { bind, load, wasiFrom } from './instance.js';

const component = await load();
const wasi = wasiFrom({ cli, clocks, io, random });

/** A fresh instance of the component bound to `store`: its `dsh:fs/tools` exports. */
export function instantiate(store) {
  return bind(component, store, wasi).tools;
}
