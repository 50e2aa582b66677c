// The quick language answer the brief checks ask before the detector
// (services/generation-runner/src/domain/language-signs.ts): prose plainly in each of the spec's
// ten languages is recognised as its own, never as another's; a near neighbour outside the ten,
// a mixed text or too little text is left to the detector; and wherever it says yes, the detector
// (tinyld, which the check asks otherwise) gives the same language.
import { describe, expect, test } from "bun:test";
import { detectAll } from "tinyld";
import { plainlyWrittenIn } from "../../services/generation-runner/src/domain/language-signs.ts";

const PROSE: Record<string, string> = {
  en: "Good coffee starts with fresh beans and the right grind. If you want a cup that tastes of the fruit and not of the roast, weigh your coffee and your water, and pour slowly. This is how the best cafés make it, and you can do it at home with a kettle and a simple dripper. What matters most is that the water is hot but not boiling.",
  de: "Guter Kaffee beginnt mit frischen Bohnen und dem richtigen Mahlgrad. Wer eine Tasse möchte, die nach Frucht und nicht nach Röstung schmeckt, wiegt den Kaffee und das Wasser ab und gießt langsam auf. So machen es die besten Cafés, und das ist auch zu Hause mit einem Wasserkocher und einem einfachen Filter möglich. Wichtig ist vor allem, dass das Wasser heiß ist, aber nicht kocht.",
  fr: "Un bon café commence avec des grains frais et une mouture adaptée. Si vous voulez une tasse qui a le goût du fruit et pas celui de la torréfaction, pesez le café et l'eau, puis versez lentement. C'est ainsi que les meilleurs cafés le préparent, et vous pouvez le faire chez vous avec une bouilloire et un filtre simple. Le plus important est que l'eau soit chaude sans bouillir.",
  es: "Un buen café empieza con granos frescos y la molienda adecuada. Si quieres una taza que sepa a fruta y no a tueste, pesa el café y el agua, y vierte despacio. Así lo preparan los mejores cafés, y también puedes hacerlo en casa con un hervidor y un filtro sencillo. Lo más importante es que el agua esté caliente pero sin hervir, porque hay sabores muy delicados.",
  it: "Un buon caffè comincia con chicchi freschi e la macinatura giusta. Se vuoi una tazza che sappia di frutta e non di tostatura, pesa il caffè e l'acqua, e versa lentamente. Così lo preparano i migliori bar, ed è possibile farlo anche a casa con un bollitore e un filtro semplice. La cosa più importante è che l'acqua sia calda ma non bollente, perché questo cambia molto il gusto delle tazze.",
  pt: "Um bom café começa com grãos frescos e a moagem certa. Se você quer uma xícara com sabor de fruta e não de torra, pese o café e a água, e despeje devagar. É assim que os melhores cafés o preparam, e você também pode fazer isso em casa com uma chaleira e um filtro simples. O mais importante é que a água esteja quente, mas não fervendo, porque isso muda muito o sabor.",
  ru: "Хороший кофе начинается со свежих зёрен и правильного помола. Если вы хотите чашку со вкусом фруктов, а не обжарки, взвесьте кофе и воду и лейте медленно. Так его готовят лучшие кофейни, и это можно сделать дома с чайником и простым фильтром. Важнее всего, чтобы вода была горячей, но не кипела, потому что мы чувствуем разницу.",
  ja: "おいしいコーヒーは、新鮮な豆と適切な挽き具合から始まります。焙煎ではなく果実の味がする一杯を求めるなら、コーヒーと水を量り、ゆっくり注いでください。最高のカフェもこうして淹れていて、家でもケトルと簡単なドリッパーがあればできます。大切なのは、お湯が熱くても沸騰していないことです。",
  zh: "好咖啡从新鲜的咖啡豆和合适的研磨度开始。如果你想要一杯尝起来是果香而不是烘焙味的咖啡，就要称量咖啡和水，并且慢慢注水。最好的咖啡馆就是这样冲煮的，在家里用一个水壶和一个简单的滤杯也能做到。最重要的是水要热，但不能沸腾。",
  ko: "좋은 커피는 신선한 원두와 알맞은 분쇄도에서 시작됩니다. 로스팅 맛이 아니라 과일 맛이 나는 한 잔을 원한다면 커피와 물의 무게를 재고 천천히 부으세요. 최고의 카페도 이렇게 내리며, 집에서도 주전자와 간단한 드리퍼만 있으면 할 수 있습니다. 가장 중요한 것은 물이 뜨겁지만 끓지 않는 것입니다.",
};

// Near neighbours outside the ten, each closest to one of them.
const NEIGHBOURS: [string, string, string][] = [
  ["ca", "es", "Un bon cafè comença amb grans frescos i la mòlta adequada. Si vols una tassa que sàpiga a fruita i no a torrat, pesa el cafè i l'aigua, i aboca a poc a poc. Així el preparen les millors cafeteries, i també ho pots fer a casa amb un bullidor i un filtre senzill. El més important és que l'aigua sigui calenta però sense bullir."],
  ["gl", "pt", "Un bo café comeza con grans frescos e a moenda axeitada. Se queres unha cunca que saiba a froita e non a torrado, pesa o café e a auga, e verte amodo. Así o preparan as mellores cafetarías, e tamén o podes facer na casa cunha chaleira e un filtro sinxelo. O máis importante é que a auga estea quente pero sen ferver."],
  ["nl", "de", "Goede koffie begint met verse bonen en de juiste maalgraad. Wie een kop wil die naar fruit smaakt en niet naar branding, weegt de koffie en het water af en schenkt langzaam. Zo maken de beste cafés het, en dat kan ook thuis met een waterkoker en een eenvoudig filter. Het belangrijkste is dat het water heet is maar niet kookt."],
  ["uk", "ru", "Хороша кава починається зі свіжих зерен і правильного помелу. Якщо ви хочете чашку зі смаком фруктів, а не обсмаження, зважте каву й воду та лийте повільно. Так її готують найкращі кав'ярні, і це можна зробити вдома з чайником і простим фільтром. Найважливіше, щоб вода була гарячою, але не кипіла."],
];

describe("prose plainly in one of the ten languages", () => {
  for (const [language, text] of Object.entries(PROSE)) {
    test(`${language} is recognised as ${language}, and as no other of the ten`, () => {
      expect(plainlyWrittenIn(text, language)).toBe(true);
      for (const other of Object.keys(PROSE)) if (other !== language) expect(plainlyWrittenIn(text, other)).toBe(false);
    });
  }
});

test("a near neighbour outside the ten is left to the detector", () => {
  for (const [, closest, text] of NEIGHBOURS) expect(plainlyWrittenIn(text, closest)).toBe(false);
});

test("too little text, or a text half in another language, is left to the detector", () => {
  expect(plainlyWrittenIn("Good coffee starts with fresh beans.", "en")).toBe(false);
  expect(plainlyWrittenIn(`${PROSE.en} ${PROSE.es}`, "en")).toBe(false);
  expect(plainlyWrittenIn(`${PROSE.zh}${PROSE.ja}`, "zh")).toBe(false);
  expect(plainlyWrittenIn(PROSE.en!, "nl")).toBe(false);
});

test("wherever it says yes, the detector gives the same language", () => {
  for (const text of [...Object.values(PROSE), ...NEIGHBOURS.map(([, , t]) => t)]) {
    for (const language of Object.keys(PROSE)) if (plainlyWrittenIn(text, language)) expect(detectAll(text)[0]?.lang).toBe(language);
  }
});
