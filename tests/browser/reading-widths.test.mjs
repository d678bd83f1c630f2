// End-to-end test of the visualizer page read as a person reads it, in Spanish, Italian and Turkish at 375 and
// 1920 px: reading.test.mjs's sweep (its states, its checks), every state of each language's own lesson (000
// Spanish, 001 Italian, 002 Turkish). A file of its own so that it runs beside reading.test.mjs (English at every
// width and every language at 1366 px); its faults: tests/artifacts/reading-widths-faults.txt.
import "./reading.test.mjs";
