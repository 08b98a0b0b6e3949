/** Entries of the breached list (15+ characters) that the 49,233-entry common list does not hold. */
export const BREACHED_ONLY = [
  'perasperaadastra',
  'stairwaytoheaven',
  'worldofwarcraft',
  'qazwsxedcrfvtgbyhn',
];

/** Generated once at random (20 printable ASCII characters); in neither list. */
export const STRONG_RANDOM = 'T9r#Lk2vQ!m7Wz@pX4sB';
