export { CommandBuffer } from './commandBuffer.js';
export type { Command, CommandBufferState, CommandCallback, NDRange } from './commandBuffer.js';
export { dispatch } from './dispatch.js';
export type { DispatchOptions } from './dispatch.js';
export { Fence } from './fence.js';
export type { FenceState } from './fence.js';
export { Semaphore } from './semaphore.js';
export type { SemaphoreState } from './semaphore.js';
