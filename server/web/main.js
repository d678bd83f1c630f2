/*
 * main.js - starts the page: each module's listeners in the order the page
 * has always added them, then the lesson or the shared state in the URL.
 */
import { PRESETS } from "./presets.js";
import { init as initForm, maskBody } from "./form.js";
import { init as initRequest } from "./request.js";
import { fmt } from "./format.js";
import { PALETTES, luminance } from "./colour.js";
import { init as initCompare } from "./compare.js";
import { init as initLessons, loadPreset } from "./lessons.js";
import { init as initExplain } from "./explain.js";
import { init as initShare, applyState, unpackState } from "./share.js";
import { init as initModelView } from "./model-view.js";

initForm();
initRequest();
initCompare();
initLessons();
initExplain();
initShare();
initModelView();
// for the browser test: the page's own formatter, palettes, luminance and mask
Object.assign(window.attentionVisualizer, { fmt, PALETTES, luminance, maskBody });

// a shared link (#state=…) restores its page; ?lesson=002 opens a lesson
const startLesson = new URLSearchParams(location.search).get("lesson");
const startState = /^#state=([\w-]+)$/.exec(location.hash);
if (startState) unpackState(startState[1]).then(applyState, () => loadPreset("001"));
else loadPreset(startLesson in PRESETS ? startLesson : "001");
