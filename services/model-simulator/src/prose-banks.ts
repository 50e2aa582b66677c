// The simulator's prose in the languages it writes: a bank of sentence templates ({T} the topic,
// {K} and {K2} keywords, {A} an adjective, {N} a noun), short closers filed by their word count,
// section headings and description templates. English is the default; a prompt that names German
// as the article's language (languageAskedFor) is answered in German, as a real model would, so the
// language check has German prose to measure. Topics and keywords stay as the prompt gives them.

export interface ProseBank {
  sentences: readonly string[];
  /** Sentence openers; the sentence after one starts lower-case (none in German, whose nouns keep their capital). */
  openers: readonly string[];
  adjectives: readonly string[];
  nouns: readonly string[];
  closers: Readonly<Record<number, readonly string[]>>;
  headings: readonly string[];
  closing: string;
  descriptions: readonly string[];
}

export const GERMAN: ProseBank = {
  sentences: [
    "Wer sich mit {T} beschäftigt, fragt sich zuerst, was wirklich einen Unterschied macht.",
    "Die kurze Antwort lautet: Bei {K} kommt es auf mehr an, als die Werbung verspricht.",
    "Mit einem {A} Ansatz zahlt sich {T} oft schneller aus als erwartet.",
    "Es hilft, das Wesentliche vom bloß Angenehmen zu trennen.",
    "Wenn {K} gut gelingt, wird alles Weitere leichter.",
    "Erfahrene Leute suchen keine Perfektion, sondern Ergebnisse, die sie wiederholen können.",
    "Denke zuerst an {N}, denn sie prägt jede spätere Entscheidung zu {K}.",
    "Kleine Änderungen an {K} verändern das Ergebnis oft spürbar.",
    "Es gibt keine einzige richtige Antwort, aber klare Muster, denen man folgen kann.",
    "Budget, Zeit und Erfahrung bestimmen, welcher Weg bei {T} sinnvoll ist.",
    "Schreibe vorher auf, wie Erfolg mit {T} im Alltag aussehen würde.",
    "Ein häufiger Fehler ist, {K} als Nebensache zu behandeln.",
    "Der Unterschied zwischen gut und sehr gut liegt meist bei {N}.",
    "Wer neu bei {T} ist, sollte mit den Grundlagen beginnen.",
    "Mit einer {A} Routine rund um {K} wächst mit der Zeit die Sicherheit.",
    "Ein direkter Vergleich mehrerer Möglichkeiten macht die Abwägungen leichter sichtbar.",
    "{K} und {K2} hängen eng zusammen, deshalb wirkt sich eine Änderung auf beides aus.",
    "Unabhängige Tests und lange Erfahrungen sind nützlicher als der erste Eindruck.",
    "Es lohnt sich, die eigenen Annahmen zu {K} alle paar Monate zu prüfen.",
    "Klare Ziele machen aus {T} eine Reihe machbarer Schritte.",
    "Qualität hängt selten an einem Punkt, sie ist die Summe vieler kleiner Entscheidungen.",
    "Wenn etwas zu kompliziert wirkt, gibt es meist einen einfacheren Weg zu {K}.",
    "Ein paar einfache Messwerte machen Fortschritte bei {T} sichtbar.",
    "Der beste Rat ist oft der unscheinbarste: Bleib dran und achte auf {N}.",
    "Viele Fragen zu {K} haben eine einfache Antwort.",
    "Der Preis zählt, aber das billigste Angebot wird auf Dauer oft am teuersten.",
    "Praktische Erfahrung mit {T} schlägt die Theorie, sobald die Grundlagen sitzen.",
    "Mach dir Notizen, denn Details zu {K} vergisst man schnell.",
    "Rechne mit einer kurzen Lernphase und sieh frühe Fehler als Hinweis.",
    "Eine Checkliste sorgt dafür, dass bei {T} nichts Wichtiges untergeht.",
    "Teste neue Ideen erst im Kleinen, bevor du sie groß umsetzt.",
    "Die richtige Wahl hängt von deiner Lage ab, nicht davon, was bei anderen klappte.",
    "Gute Gewohnheiten bei {K} wachsen wie Zinsen auf einem Sparkonto.",
    "Echte Beispiele sind der schnellste Weg, {T} in der Praxis zu verstehen.",
    "Ein wenig {N} am Anfang verhindert die meisten späteren Probleme.",
    "Einfache Werkzeuge, gut genutzt, schlagen komplizierte.",
    "Niemand beherrscht {K} beim ersten Versuch.",
    "Schreib auf, was funktioniert, und wiederhole es.",
    "Verlässliche Ergebnisse entstehen durch einen wiederholbaren Ablauf.",
    "Die Grundlagen von {K} ändern sich selten.",
  ],
  openers: [],
  // Declined for the dative the templates use them in ("mit einem praktischen Ansatz").
  adjectives: ["praktischen", "verlässlichen", "durchdachten", "beständigen", "ruhigen", "bewussten", "vernünftigen", "stetigen", "geduldigen"],
  // Feminine, as the templates refer to them ("denn sie prägt …").
  nouns: ["Vorbereitung", "Planung", "Beständigkeit", "Übung", "Pflege", "Sorgfalt", "Rückmeldung", "Geduld"],
  closers: {
    2: ["Klein anfangen.", "Neugierig bleiben.", "Einfach weitermachen.", "Oft testen.", "Fortschritt messen."],
    3: ["Halte es einfach.", "Geduld lohnt sich.", "Details zählen hier.", "Kleine Erfolge zählen.", "Üben hilft immer."],
    4: ["Erst planen, dann anpassen.", "Das macht einen Unterschied.", "Jede Situation ist anders.", "Regelmäßig prüfen und verbessern."],
    5: ["Das sollte man sich merken.", "Kleine Schritte summieren sich schnell.", "Gute Vorbereitung spart später Zeit.", "Einfache Routinen wirken hier gut."],
    6: ["Ein wenig Vorbereitung hilft sehr viel.", "Die Grundlagen verdienen hier mehr Aufmerksamkeit.", "Wenige Abkürzungen überstehen den echten Alltag."],
  },
  headings: [
    "Warum sich {T} lohnt",
    "{K} verstehen",
    "Der Einstieg",
    "{K} richtig wählen",
    "Häufige Fehler vermeiden",
    "Praktische Tipps für {T}",
    "Bessere Ergebnisse erzielen",
    "Was Erfahrene empfehlen",
    "Vorausplanen",
    "Fortschritt messen",
    "Kosten und Abwägungen",
    "Oft übersehene Details",
  ],
  closing: "Fazit",
  descriptions: [
    "Ein praktischer Blick auf {T}: was zählt, typische Fehler und wie verlässliche Ergebnisse gelingen.",
    "Alles Wichtige zu {T}, von den Grundlagen bis zu den Details, die Erfahrene zuerst prüfen.",
    "So gehst du {T} an: klare Schritte, ehrliche Abwägungen und Tipps, die du heute nutzen kannst.",
  ],
};

/**
 * The article language a prompt names, when the simulator writes it: "language de", "Language: de",
 * "language (de)", "Article language code: de". Only German is written besides English.
 */
export function languageAskedFor(prompt: string): "de" | undefined {
  return /\blanguage(?: code)?\s*[:=(]?\s*\(?["'`]?de\b(?![-\w])/i.test(prompt) ? "de" : undefined;
}
