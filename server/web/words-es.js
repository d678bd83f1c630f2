/*
 * words-es.js - the page's messages in Spanish.
 * One section per module, in the order of words-en.js; placeholders as
 * named there.  This is the only place a sentence of the page is
 * written in Spanish.
 */
export default {
  "lang.name": "Español",

  // ---- page: index.html, main.js, locale.js, format.js

  // ---- form: form.js, editor.js, parse.js, field-errors.js

  // ---- request: request.js, reply.js, base.js (the API's errors in the student's words)

  // ---- lessons: lessons.js, presets.js, random-inputs.js

  // ---- guided: guided.js

  // ---- explain: explain.js, highlight.js

  // ---- views: views.js, matrix.js, weight-scale.js, colour.js
  "views.card.q_all": "Q, todas las cabezas",
  "views.card.context": "Contexto",
  "views.card.q_rope": "Q tras RoPE",
  "views.card.k_rope": "K tras RoPE",
  "views.card.k_cache": "Caché de K",
  "views.card.v_cache": "Caché de V",
  "views.card.scores": "QKᵀ (puntuaciones sin dividir todavía por √d_k)",
  "views.card.scaled_scores": "Puntuaciones escaladas = QKᵀ/√d_k",
  "views.card.scaled_scores_given": "Puntuaciones escaladas = QKᵀ × la escala dada",
  "views.card.masked_scores": "Puntuaciones enmascaradas",
  "views.card.weights": "Pesos de atención = softmax",
  "views.card.head_outputs": "Salida de la cabeza",
  "views.card.concat": "Concatenación",
  "views.card.output": "Salida",
  "views.lesson.name": "lección {lesson}: {name}",
  "views.lesson.unnamed_scores": "no está en la lección {lesson}: su {name} ya está dividido por √d_k (la tarjeta siguiente)",
  "views.scale.number": "{value}",
  "views.scale.its_largest": "su máximo",
  "views.scale.weights.fixed": "de 0 a 1: el color más oscuro es un peso de 1",
  "views.scale.weights.fixed_heads": "todas las cabezas de 0 a 1: un mismo color es un mismo peso en cada cabeza",
  "views.scale.weights.own_head": "escala propia de la cabeza {head}: su color más oscuro es su peso máximo",
  "views.scale.weights.own": "escala propia: su color más oscuro es su peso máximo",
  "views.scale.weights.own_each": "cada cabeza en su propia escala, su color más oscuro es su peso máximo: {list}",
  "views.scale.head_top": "cabeza {head} {top}",
  "views.scale.one_qkv": "una escala para Q, K y V",
  "views.scale.one_scores": "una escala para todas las puntuaciones (QKᵀ, escaladas, enmascaradas)",
  "views.scale.one_split": "una escala para Q y sus cabezas",
  "views.scale.weights.card": "de 0 a 1, como todo peso",
  "views.scale.own_card": "escala propia de esta tarjeta, hasta su mayor valor absoluto",
  "views.zoom_out": "{card}: alejar",
  "views.zoom_in": "{card}: acercar",
  "views.slice_of": "una parte de {stage}",
  "views.shape": "forma",
  "views.cell": "{cell} = {value}",
  "views.cell.masked": "{cell} = {value} (enmascarado: esta consulta no puede atender a esta clave)",
  "views.masked": "enmascarado",
  "views.row_sum": "suma de la fila, calculada por esta página",
  "views.row_empty": "{row}: no queda ninguna clave a la que atender",
  "views.canvas_label": "{card}, {rows} por {cols}: las flechas mueven el cursor y leen su valor exacto, Intro lo explica",
  "views.canvas_label.caption": "{card}, {rows} por {cols}, {caption}: las flechas mueven el cursor y leen su valor exacto, Intro lo explica",
  "views.table_label": "{card}, {caption}",
  "views.seq.title": "Secuencias del lote",
  "views.seq.group": "Secuencias",
  "views.seq.button": "Secuencia {seq}",
  "views.heads.title": "Los pesos de cada cabeza",
  "views.heads.choose": "elija una cabeza",
  "views.heads.readout": "cabeza {head}: pesos[{query} → {key}] = {value}",
  "views.heads.group": "Cabezas",
  "views.heads.button_label": "Cabeza {head}: ábrala; las flechas leen sus pesos",
  "views.heads.keys": "clave 0…{last} →",
  "views.heads.queries": "consulta 0…{last} ↓",
  "views.heads.button": "Cabeza {head}",
  "views.heads.note": "Señale una cabeza para ver el valor exacto de un peso, o enfóquela y use las flechas; un píxel que representa varias celdas muestra la mayor de ellas.",

  // ---- head view and model view: head-view.js, model-view.js
  "hv.title": "Vista de la cabeza",
  "hv.formula": "Cada consulta (izquierda) hacia las claves a las que atiende (derecha), tan gruesa y oscura como el peso.",
  "hv.formula.dense": "Las líneas de cada consulta hacia las claves, tan gruesas y oscuras como el peso; {n}×{m} pares son demasiados a la vez: señale una consulta o enfóquela y use las flechas.",
  "hv.aria": "Cabeza {head}: líneas de cada consulta (izquierda) a las claves a las que atiende (derecha), tan gruesas y oscuras como el peso; las flechas eligen una consulta y leen sus claves más fuertes",
  "hv.attends_most": "{query} atiende sobre todo a: {list}",
  "hv.key_weight": "{key} {weight}",
  "hv.export.title": "Vista de la cabeza: cada consulta (izquierda) hacia las claves a las que atiende (derecha), tan gruesa y oscura como el peso",
  "hv.export.title.head": "Vista de la cabeza {head}: cada consulta (izquierda) hacia las claves a las que atiende (derecha), tan gruesa y oscura como el peso",
  "hv.export.title.head_seq": "Vista de la cabeza {head}, secuencia {seq}: cada consulta (izquierda) hacia las claves a las que atiende (derecha), tan gruesa y oscura como el peso",
  "hv.export.one_query": "Solo las líneas de la consulta {query}: demasiados pares para dibujarlos a la vez.",
  "mv.export.head": "cabeza {head}",
  "mv.export.title": "Los pesos de atención de cada cabeza ({n}×{m} cada una): consultas hacia abajo, claves a lo ancho",
  "mv.export.title_seq": "Los pesos de atención de cada cabeza, secuencia {seq} ({n}×{m} cada una): consultas hacia abajo, claves a lo ancho",
  "mv.export.masked": "Gris: una clave a la que la consulta no puede atender (enmascarada).",
  "mv.error.json": "no es JSON: {detail}",
  "mv.error.layers": "no contiene \"layers\": [{\"name\", \"request\"}, …]",
  "mv.error.request": "la capa {layer} no tiene \"request\"",
  "mv.error.api": "{layer}: {status} {detail}",
  "mv.layer": "capa {layer}",
  "mv.layer_group": "Capa {layer}: {name}",
  "mv.open": "Abrir la capa {layer} ({name}), cabeza {head}",
  "mv.scale.fixed": "todas las capas y cabezas de 0 a 1: un mismo color es un mismo peso en todas partes",
  "mv.scale.layer_tops": "capa {layer} {list}",
  "mv.hint": "{name}: {layers} capas × cabezas; cada cuadrado son los pesos de una cabeza, consultas hacia abajo, claves a lo ancho, de 0 (amarillo claro) al extremo que indica la leyenda (azul oscuro), gris donde una clave está oculta. Un clic abre abajo todo el cálculo de esa capa.",
  "mv.note": "Capa {layer} ({name}) de {bundle}.",
  "mv.status.reading": "Leyendo {file}…",
  "mv.status.asking": "Pidiendo la capa {layer} de {layers}…",
  "mv.status.done": "{file}: {layers} capas.",
  "mv.status.failed": "No se pudo mostrar {file}: {detail}",

  // ---- compare: compare.js
  "cmp.head": "cabeza {head}",
  "cmp.state.off": "desactivado",
  "cmp.state.heads": "cabeza {a} − cabeza {b}",
  "cmp.state.dtype": "float64 − float32",
  "cmp.state.mask": "con − sin las máscaras",
  "cmp.title": "Comparar",
  "cmp.failed": "La segunda petición falló: {detail}",
  "cmp.with_masks": "con las máscaras",
  "cmp.without_masks": "sin ellas",
  "cmp.card.weights": "Pesos: {a} − {b}",
  "cmp.card.output": "Salida: {a} − {b}",
  "cmp.formula.head_weights": "pesos de la cabeza {head}, {a} menos {b}; mayor |diferencia| {largest}",
  "cmp.formula.weights": "pesos, {a} menos {b}; mayor |diferencia| {largest}",
  "cmp.formula.output": "salida, {a} menos {b}; mayor |diferencia| {largest}",
  "cmp.scale": "rojo: el primero es mayor; hasta la mayor |diferencia|",
  "cmp.heading": "Comparar: {a} − {b}",
  "cmp.from.this": "este resultado",
  "cmp.from.second": "una segunda petición",

  // ---- share and export: share.js, short-link.js, snapshot.js
  "share.option.head_view": "vista de la cabeza (líneas)",
  "share.option.head_view.head": "vista de la cabeza (líneas), cabeza {head}",
  "share.option.model_view": "los pesos de cada cabeza (vista del modelo)",
  "share.export.title": "{card} ({rows}×{cols})",
  "share.export.title.head": "{card}, cabeza {head} ({rows}×{cols})",
  "share.export.title.seq": "{card}, secuencia {seq} ({rows}×{cols})",
  "share.export.title.head.seq": "{card}, cabeza {head}, secuencia {seq} ({rows}×{cols})",
  "share.copied": "Enlace copiado.",
  "share.copy_by_hand": "Seleccione el enlace y cópielo.",
  "share.size": "Tamaño de la imagen",
  "share.size.times": "{scale}×",

  // ---- presentation view
  "present.button": "Presentar: una etapa cada vez, a pantalla completa",
  "present.prev": "Anterior",
  "present.next": "Siguiente",
  "present.exit": "Salir de la presentación",
  "present.hint": "Flechas o Re Pág/Av Pág: la etapa anterior o la siguiente; Esc: volver a la página.",
  "present.count": "etapa {stage} de {stages}",
  "present.stage_title": "{group}: {step}",
  "present.empty": "Aún no hay nada calculado: cargue una lección o pulse Calcular.",
  "present.skip": "Ir al modo guiado y a la presentación",
};
