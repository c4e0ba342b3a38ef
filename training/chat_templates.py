"""A chat template that rewrites the past the way popular templates do, for the token-exact tests and benchmarks.

`REASONING_DROPPING` is ChatML (SmolLM2's tokens) with Qwen3's habits: it takes `tools` (listed in the system
turn), renders tool results as `<tool_response>` blocks in user turns, keeps the reasoning (`reasoning_content`, or
a `<think>...</think>` block at the start of the content) only for the replies after the last user query and drops
it from earlier ones, and writes tool calls back from the message's arguments with `tojson`, so arguments the
model wrote as an object come back as a quoted string. A whole-history re-render under it never reproduces the
tokens a model sampled once the conversation moves on; `PromptBuilder` must keep episodes whole anyway.
"""

from __future__ import annotations

import copy
from typing import Any

REASONING_DROPPING = """\
{%- if tools %}
{{- '<|im_start|>system\\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}
{{- '# Tools\\n\\nYou may call one or more functions.\\n<tools>' }}
{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}
{{- '\\n</tools>\\nCall one with <tool_call>{\"name\": <name>, \"arguments\": <args>}</tool_call><|im_end|>\\n' }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- endif %}
{%- set ns = namespace(last_query=-1) %}
{%- for message in messages %}
{%- if message.role == 'user' %}{%- set ns.last_query = loop.index0 %}{%- endif %}
{%- endfor %}
{%- for message in messages %}
{%- set content = message.content if message.content is string else '' %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}
{%- elif message.role == 'assistant' %}
{%- set reasoning = message.reasoning_content if message.reasoning_content is string else '' %}
{%- if '</think>' in content %}
{%- set reasoning = content.split('</think>')[0].split('<think>')[-1].strip('\\n') %}
{%- set content = content.split('</think>')[-1].lstrip('\\n') %}
{%- endif %}
{{- '<|im_start|>assistant\\n' }}
{%- if loop.index0 > ns.last_query and reasoning %}
{{- '<think>\\n' + reasoning + '\\n</think>\\n\\n' }}
{%- endif %}
{{- content }}
{%- for call in message.tool_calls or [] %}
{%- set fn = call.function if call.function is defined else call %}
{{- '\\n<tool_call>\\n{\"name\": \"' + fn.name + '\", \"arguments\": ' + (fn.arguments | tojson) + '}\\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}
{{- '\\n<tool_response>\\n' + content + '\\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""


def with_template(tokenizer: Any, template: str = REASONING_DROPPING) -> Any:
    """A copy of `tokenizer` whose chat template is `template` (the original is left as it is)."""
    copied = copy.deepcopy(tokenizer)
    copied.chat_template = template
    return copied
