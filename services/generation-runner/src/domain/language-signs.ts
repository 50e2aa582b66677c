// A quick answer to "is this prose plainly written in the language asked?" for the spec's ten
// languages, asked before the statistical detector (tinyld), which reads every character against
// its n-gram tables and was the largest piece of the runner's CPU per article (about a sixth).
// It reads the signs a reader would: the script (Hangul is Korean; kana make Japanese; Han alone
// is Chinese; Cyrillic with ы and none of the letters other Cyrillic languages add is Russian),
// and for the Latin-script languages their commonest words that none of the other five shares.
// It only ever says yes, and only when the signs are overwhelming; anything less (a text mixing
// languages, a language outside the ten, a near neighbour such as Catalan, Galician or Dutch) is
// left to the detector. Its test pins that wherever it says yes, the detector agrees.
import { isHan, isKana } from "../../../kit/src/words.ts";

/** Commonest words of each Latin-script language of the ten that none of the other five uses as often. */
const COMMON_WORDS: Record<string, string> = {
  en: "the and of to is that it for with you are this be your can how what from was have",
  de: "der die und das ist nicht mit den ein eine sich auf für dem auch wird sind werden oder wie",
  fr: "les des et est une pour dans du qui pas vous sur au avec sont ce cette plus nous",
  es: "el los las y más pero sus muy también hay cuando puede sin",
  it: "di che per non sono della gli è anche più questo dei nel alla delle degli questa molto",
  pt: "os um uma não em com ao são você pelo pela seu sua isso muito também há",
};
/** Each of those words with its language (no word is in two lists). */
const LANGUAGE_OF_WORD = new Map(Object.entries(COMMON_WORDS).flatMap(([language, words]) => words.split(" ").map((word) => [word, language] as const)));
/** Share of the words the asked language's common words must make, and how many times any other's. */
const COMMON_SHARE = 0.1;
const DOMINANCE = 4;
/** Fewer words or letters than this are left to the detector. */
const MIN_WORDS = 30;
const MIN_LETTERS = 40;
/** Share of the letters the asked language's script must make. */
const SCRIPT_SHARE = 0.6;
// Letters of the other languages written in Cyrillic (Ukrainian, Belarusian, Serbian, Macedonian, Kazakh, …).
const NOT_RUSSIAN = /[іїєґўђјљњћџѓќѕәғқңөұүһ]/i;

interface Letters {
  all: number;
  latin: number;
  cyrillic: number;
  hangul: number;
  kana: number;
  han: number;
}

function lettersOf(text: string): Letters {
  const counts: Letters = { all: 0, latin: 0, cyrillic: 0, hangul: 0, kana: 0, han: 0 };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7)) counts.latin++;
    else if (c >= 0x400 && c <= 0x4ff) counts.cyrillic++;
    else if ((c >= 0xac00 && c <= 0xd7af) || (c >= 0x1100 && c <= 0x11ff) || (c >= 0x3130 && c <= 0x318f)) counts.hangul++;
    else if (isKana(c)) counts.kana++;
    else if (isHan(c)) counts.han++;
    else continue;
    counts.all++;
  }
  return counts;
}

function plainlyLatin(text: string, language: string): boolean {
  const hits = new Map<string, number>();
  let words = 0;
  for (const [word] of text.toLowerCase().matchAll(/\p{L}+/gu)) {
    words++;
    const of = LANGUAGE_OF_WORD.get(word);
    if (of) hits.set(of, (hits.get(of) ?? 0) + 1);
  }
  if (words < MIN_WORDS) return false;
  const ownHits = hits.get(language) ?? 0;
  const othersBest = Math.max(0, ...[...hits].filter(([name]) => name !== language).map(([, n]) => n));
  return ownHits >= words * COMMON_SHARE && ownHits >= othersBest * DOMINANCE;
}

/** Whether `text` is plainly written in `language` (one of the ten); false means "ask the detector", not "no". */
export function plainlyWrittenIn(text: string, language: string): boolean {
  const letters = lettersOf(text);
  if (letters.all < MIN_LETTERS) return false;
  const share = (n: number) => n / letters.all;
  switch (language) {
    case "ko":
      return share(letters.hangul) >= SCRIPT_SHARE;
    case "ja":
      return share(letters.kana) >= 0.2 && share(letters.kana + letters.han) >= SCRIPT_SHARE;
    case "zh":
      return share(letters.han) >= SCRIPT_SHARE && letters.kana === 0 && letters.hangul === 0;
    case "ru":
      return share(letters.cyrillic) >= SCRIPT_SHARE && /ы/i.test(text) && !NOT_RUSSIAN.test(text);
    default:
      return COMMON_WORDS[language] !== undefined && share(letters.latin) >= 0.9 && plainlyLatin(text, language);
  }
}
