/** Site timing without set-up: nodes ready at once, nothing to mount, deinitialise or hand over, no slowdown. */
export const noSetUp = {
  nodeInitSeconds: 0,
  storageInitSecondsPerGB: 0,
  storageRollbackSecondsPerGB: 0,
  storageMountSeconds: 0,
  deinitSeconds: 0,
  handoverSeconds: 0,
  slowdownFactor: 1,
};
