<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AddingBanner</name>
    <message>
        <source>Adding documents</source>
        <translation>正在添加文档</translation>
    </message>
    <message>
        <source>Show in library</source>
        <translation>在文档库中显示</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Adding 1 document</source>
        <translation>正在添加 1 个文档</translation>
    </message>
    <message>
        <source>Adding {n} documents</source>
        <translation>正在添加 {n} 个文档</translation>
    </message>
    <message>
        <source>{n} ready</source>
        <translation>{n} 个已就绪</translation>
    </message>
    <message>
        <source>{n} reading</source>
        <translation>{n} 个正在读取</translation>
    </message>
    <message>
        <source>(page {done}/{total})</source>
        <translation>（第 {done}/{total} 页）</translation>
    </message>
    <message>
        <source>{n} failed</source>
        <translation>{n} 个失败</translation>
    </message>
    <message>
        <source>You can ask now; answers improve as they finish.</source>
        <translation>现在就可以提问；文档读完后回答会更完整。</translation>
    </message>
    <message>
        <source>You can ask once the first is ready; answers improve as they finish.</source>
        <translation>第一个文档就绪后即可提问；文档读完后回答会更完整。</translation>
    </message>
    <message>
        <source>1 document added</source>
        <translation>已添加 1 个文档</translation>
    </message>
    <message>
        <source>{n} documents added</source>
        <translation>已添加 {n} 个文档</translation>
    </message>
    <message>
        <source>{n} already in the library</source>
        <translation>{n} 个已在文档库中</translation>
    </message>
</context>
<context>
    <name>AnswerVersion</name>
    <message>
        <source>Answer</source>
        <translation>回答</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>进度</translation>
    </message>
    <message>
        <source>Searching your documents…</source>
        <translation>正在搜索你的文档…</translation>
    </message>
    <message>
        <source>[{reason}; asking the {route} route]</source>
        <translation>[{reason}；正在改用{route}路线]</translation>
    </message>
    <message>
        <source>[stopped]</source>
        <translation>[已停止]</translation>
    </message>
    <message>
        <source>[failed: {error}]</source>
        <translation>[失败：{error}]</translation>
    </message>
    <message>
        <source>Found no passages in your documents</source>
        <translation>在你的文档中没有找到段落</translation>
    </message>
    <message>
        <source>Found {passages} in {documents}</source>
        <translation>在 {documents}中找到 {passages}</translation>
    </message>
    <message>
        <source>1 passage</source>
        <translation>1 个段落</translation>
    </message>
    <message>
        <source>{n} passages</source>
        <translation>{n} 个段落</translation>
    </message>
    <message>
        <source>1 document</source>
        <translation>1 个文档</translation>
    </message>
    <message>
        <source>{n} documents</source>
        <translation>{n} 个文档</translation>
    </message>
    <message>
        <source>Reading them on this computer…</source>
        <translation>正在本机阅读…</translation>
    </message>
    <message>
        <source>Taking an earlier answer…</source>
        <translation>正在取用之前的回答…</translation>
    </message>
    <message>
        <source>Asking {model}…</source>
        <translation>正在询问 {model}…</translation>
    </message>
    <message>
        <source>Waiting: 1 answer ahead</source>
        <translation>等待中：前面还有 1 个回答</translation>
    </message>
    <message>
        <source>Waiting: {n} answers ahead</source>
        <translation>等待中：前面还有 {n} 个回答</translation>
    </message>
    <message>
        <source>No passage given to the model states {facts}: the model may have made this up. Check it before relying on it.</source>
        <translation>提供给模型的段落中没有任何一段提到 {facts}：这可能是模型编造的。请先核实再采用。</translation>
    </message>
    <message>
        <source>Click, or Tab to it and press Enter, to open the page.</source>
        <translation>点击，或用 Tab 移到此处后按 Enter，打开该页。</translation>
    </message>
</context>
<context>
    <name>BenchmarkWindow</name>
    <message>
        <source>Measures your local model and every configured cloud route the way the field compares them: time to first token by prompt length, prefill and decode speed, and what 1–6 concurrent requests do to each request and to the total. The quick run takes about a minute on a laptop CPU; the full run ten or more. Answers keep working meanwhile, slower.</source>
        <translation>按业界通行的方式测量本地模型和每条已配置的云端路线：不同提示长度下的首字延迟、预填充与解码速度，以及 1–6 个并发请求对单个请求和总量的影响。快速测试在笔记本 CPU 上约需一分钟，完整测试需十分钟以上。期间仍可提问，只是会慢一些。</translation>
    </message>
    <message>
        <source>Benchmark: local vs cloud</source>
        <translation>基准测试：本地与云端</translation>
    </message>
    <message>
        <source>Failed: {error}</source>
        <translation>失败：{error}</translation>
    </message>
    <message>
        <source>Quick run</source>
        <translation>快速测试</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Not run yet.</source>
        <translation>尚未运行。</translation>
    </message>
    <message>
        <source>Tables</source>
        <translation>表格</translation>
    </message>
    <message>
        <source>Connecting the cloud routes and loading the local model…</source>
        <translation>正在连接云端路线并加载本地模型…</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>已停止。</translation>
    </message>
    <message>
        <source>The benchmark could not run: {error}</source>
        <translation>基准测试无法运行：{error}</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stop the answer (Esc)</source>
        <translation>停止回答（Esc）</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Send the question (Enter)</source>
        <translation>发送问题（Enter）</translation>
    </message>
</context>
<context>
    <name>ConversationHeader</name>
    <message>
        <source>Conversation title</source>
        <translation>对话标题</translation>
    </message>
    <message>
        <source>Where answers run</source>
        <translation>回答在哪里生成</translation>
    </message>
    <message>
        <source>Set up a cloud model…</source>
        <translation>设置云端模型…</translation>
    </message>
    <message>
        <source>Cloud spending this month</source>
        <translation>本月云端花费</translation>
    </message>
    <message>
        <source>Auto: Docent decides</source>
        <translation>自动：由 Docent 决定</translation>
    </message>
    <message>
        <source>This computer only</source>
        <translation>仅本机</translation>
    </message>
    <message>
        <source>Your model server only</source>
        <translation>仅你的模型服务器</translation>
    </message>
    <message>
        <source>Cloud only</source>
        <translation>仅云端</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>{mode} — {why}</source>
        <translation>{mode} — {why}</translation>
    </message>
    <message>
        <source>{mode} (on your model server for now)</source>
        <translation>{mode}（暂时在你的模型服务器）</translation>
    </message>
    <message>
        <source>{mode} (on this computer for now)</source>
        <translation>{mode}（暂时在本机）</translation>
    </message>
    <message>
        <source>Where the next answers run: {mode}</source>
        <translation>之后的回答在：{mode}</translation>
    </message>
    <message>
        <source>{spent} of {budget}</source>
        <translation>{spent} / {budget}</translation>
    </message>
    <message>
        <source>Cloud spending this month: {spent} of the {budget} budget ({share})</source>
        <translation>本月云端花费：{spent}，预算 {budget}（{share}）</translation>
    </message>
    <message>
        <source>and 1 answer of unknown cost</source>
        <translation>另有 1 个回答费用未知</translation>
    </message>
    <message>
        <source>and {n} answers of unknown cost</source>
        <translation>另有 {n} 个回答费用未知</translation>
    </message>
    <message>
        <source>The budget is spent: answers stay on your model server.</source>
        <translation>预算已用完：回答都留在你的模型服务器。</translation>
    </message>
    <message>
        <source>The budget is spent: answers stay on this computer.</source>
        <translation>预算已用完：回答都留在本机。</translation>
    </message>
</context>
<context>
    <name>ConversationList</name>
    <message>
        <source>＋ New conversation</source>
        <translation>＋ 新对话</translation>
    </message>
    <message>
        <source>Search conversations ({key})</source>
        <translation>搜索对话（{key}）</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Your conversations appear here</source>
        <translation>你的对话会显示在这里</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>No conversation matches “{query}”</source>
        <translation>没有与“{query}”匹配的对话</translation>
    </message>
    <message>
        <source>Asked by an MCP client. Your questions go on in a conversation of your own: the client does not see them.</source>
        <translation>由 MCP 客户端提问。你的提问会在你自己的对话中继续：该客户端看不到。</translation>
    </message>
    <message>
        <source>1 question</source>
        <translation>1 个问题</translation>
    </message>
    <message>
        <source>{n} questions</source>
        <translation>{n} 个问题</translation>
    </message>
    <message>
        <source>Older</source>
        <translation>更早</translation>
    </message>
    <message>
        <source>Today</source>
        <translation>今天</translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>昨天</translation>
    </message>
    <message>
        <source>Previous 7 days</source>
        <translation>过去 7 天</translation>
    </message>
    <message>
        <source>Today {time}</source>
        <translation>今天 {time}</translation>
    </message>
    <message>
        <source>Yesterday {time}</source>
        <translation>昨天 {time}</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation>重命名…</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>导出为 Markdown…</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Rename conversation</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>Title:</source>
        <translation>标题：</translation>
    </message>
    <message>
        <source>Export conversation</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>Deleted “{title}”</source>
        <translation>已删除“{title}”</translation>
    </message>
</context>
<context>
    <name>DocumentsPanel</name>
    <message>
        <source>Document</source>
        <translation>文档</translation>
    </message>
    <message>
        <source>Pages</source>
        <translation>页数</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Indexed</source>
        <translation>索引时间</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Documents</source>
        <translation>文档</translation>
    </message>
    <message>
        <source>Searchable (improving…)</source>
        <translation>可搜索（完善中…）</translation>
    </message>
    <message>
        <source>Queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <source>Reading</source>
        <translation>读取中</translation>
    </message>
    <message>
        <source>Reading {done}/{total}</source>
        <translation>读取中 {done}/{total}</translation>
    </message>
    <message>
        <source>Reading its text: {done} of {total} pages.</source>
        <translation>正在读取文本：第 {done} 页，共 {total} 页。</translation>
    </message>
    <message>
        <source>Unchanged</source>
        <translation>未更改</translation>
    </message>
    <message>
        <source>Skipped</source>
        <translation>已跳过</translation>
    </message>
    <message>
        <source>Failed — {why}</source>
        <translation>失败 — {why}</translation>
    </message>
    <message>
        <source>{chunks} passages, {embedded} with embeddings</source>
        <translation>{chunks} 个段落，{embedded} 个已向量化</translation>
    </message>
    <message>
        <source>Keyword and semantic search both work on it.</source>
        <translation>关键词搜索和语义搜索都可用。</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Reading the scanned pages&apos; text (OCR): {done} of {total} pages. The pages read so far are searchable.</source>
        <translation>正在识别扫描页的文字（OCR）：第 {done} 页，共 {total} 页。已识别的页面可以搜索。</translation>
    </message>
    <message>
        <source>OCR {done}/{total}</source>
        <translation>OCR {done}/{total}</translation>
    </message>
    <message>
        <source>Keyword search works on it. Search by meaning is off until Docent restarts: {reason}</source>
        <translation>可按关键词搜索。在 Docent 重启前，按语义搜索已关闭：{reason}</translation>
    </message>
    <message>
        <source>Keyword search works on it. Search by meaning is off: this library has no embedding model.</source>
        <translation>可按关键词搜索。按语义搜索已关闭：此文档库没有向量化模型。</translation>
    </message>
    <message>
        <source>Keyword search works on it now; semantic search (by meaning, not only by words) comes once embedding finishes.</source>
        <translation>现在已可按关键词搜索；向量化完成后还可按语义（按意思而不只是字词）搜索。</translation>
    </message>
    <message>
        <source>{done} of {total} passages embedded.</source>
        <translation>已向量化 {done}/{total} 个段落。</translation>
    </message>
    <message>
        <source>Summarize…</source>
        <translation>摘要…</translation>
    </message>
    <message>
        <source>Re-index</source>
        <translation>重新索引</translation>
    </message>
    <message>
        <source>Remove from library</source>
        <translation>从文档库中移除</translation>
    </message>
</context>
<context>
    <name>DropOverlay</name>
    <message>
        <source>document</source>
        <translation>个文档</translation>
    </message>
    <message>
        <source>documents</source>
        <translation>个文档</translation>
    </message>
    <message>
        <source>folder</source>
        <translation>个文件夹</translation>
    </message>
    <message>
        <source>folders</source>
        <translation>个文件夹</translation>
    </message>
    <message>
        <source> and </source>
        <translation> 和 </translation>
    </message>
    <message>
        <source>file</source>
        <translation>个文件</translation>
    </message>
    <message>
        <source>files</source>
        <translation>个文件</translation>
    </message>
    <message>
        <source>Drop to add {others}: Docent reads each to see if it is a document</source>
        <translation>松开即可添加 {others}：Docent 会逐一读取，判断是否为文档</translation>
    </message>
    <message>
        <source>Drop to add {what} to your library</source>
        <translation>松开即可将 {what} 添加到文档库</translation>
    </message>
    <message>
        <source>and {others} of another type, added only if it is a document</source>
        <translation>以及 {others}（其他类型，仅当其为文档时才添加）</translation>
    </message>
    <message>
        <source>Drop documents</source>
        <translation>拖放文档</translation>
    </message>
</context>
<context>
    <name>EmptyState</name>
    <message>
        <source>Start here</source>
        <translation>从这里开始</translation>
    </message>
    <message>
        <source>Ask your documents</source>
        <translation>向你的文档提问</translation>
    </message>
    <message>
        <source>Drop zone</source>
        <translation>拖放区</translation>
    </message>
    <message>
        <source>Drop PDFs, e-books, Office files, scans or folders here.
Docent reads them on this computer and answers with the pages it used.</source>
        <translation>将 PDF、电子书、Office 文件、扫描件或文件夹拖到这里。
Docent 在本机读取它们，回答时注明所用的页码。</translation>
    </message>
    <message>
        <source>Add documents…</source>
        <translation>添加文档…</translation>
    </message>
    <message>
        <source>Try asking</source>
        <translation>试着问问</translation>
    </message>
    <message>
        <source>Add the sample documents (a retention policy, a tea primer)</source>
        <translation>添加示例文档（一份保留政策、一份茶叶入门）</translation>
    </message>
    <message>
        <source>Keyboard shortcuts: {key}</source>
        <translation>键盘快捷键：{key}</translation>
    </message>
    <message>
        <source>Ask: {question}</source>
        <translation>提问：{question}</translation>
    </message>
</context>
<context>
    <name>EntryList</name>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Base URL (OpenAI-compatible, …/v1)</source>
        <translation>基础 URL（兼容 OpenAI，…/v1）</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Transport</source>
        <translation>传输方式</translation>
    </message>
    <message>
        <source>Command (stdio)</source>
        <translation>命令（stdio）</translation>
    </message>
    <message>
        <source>Arguments (stdio)</source>
        <translation>参数（stdio）</translation>
    </message>
    <message>
        <source>Environment (stdio, NAME=value per line)</source>
        <translation>环境变量（stdio，每行一个 NAME=value）</translation>
    </message>
    <message>
        <source>URL (HTTP transports)</source>
        <translation>URL（HTTP 传输）</translation>
    </message>
    <message>
        <source>Headers (Name: value per line)</source>
        <translation>请求头（每行一个 Name: value）</translation>
    </message>
    <message>
        <source>Key (bearer token, or the value of the key variable)</source>
        <translation>密钥（Bearer 令牌，或密钥变量的值）</translation>
    </message>
    <message>
        <source>Key variable (stdio)</source>
        <translation>密钥变量（stdio）</translation>
    </message>
    <message>
        <source>Chat tool</source>
        <translation>聊天工具</translation>
    </message>
    <message>
        <source>Line before the server&apos;s own notes in its answer</source>
        <translation>回答中服务器自身备注之前的一行</translation>
    </message>
    <message>
        <source>Progress messages carry</source>
        <translation>进度消息内容</translation>
    </message>
    <message>
        <source>Tool arguments (role=argument per line)</source>
        <translation>工具参数（每行一个 role=argument）</translation>
    </message>
    <message>
        <source>Models (comma-separated)</source>
        <translation>模型（以逗号分隔）</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>stored: {key}</source>
        <translation>已保存：{key}</translation>
    </message>
    <message>
        <source>no key stored</source>
        <translation>未保存密钥</translation>
    </message>
    <message>
        <source>{stored} — type to replace</source>
        <translation>{stored} — 输入以替换</translation>
    </message>
</context>
<context>
    <name>FirstRunDialog</name>
    <message>
        <source>Welcome to Docent</source>
        <translation>欢迎使用 Docent</translation>
    </message>
    <message>
        <source>Private by default</source>
        <translation>默认保护隐私</translation>
    </message>
    <message>
        <source>Docent reads your documents and answers on this computer, with the model it comes with: no account, no download. Nothing leaves this computer unless you set up a cloud model.</source>
        <translation>Docent 使用自带的模型，在本机读取你的文档并回答：无需账号，无需下载。除非你设置了云端模型，否则任何内容都不会离开本机。</translation>
    </message>
    <message>
        <source>Drop your documents</source>
        <translation>拖入你的文档</translation>
    </message>
    <message>
        <source>PDFs, e-books, Word, Excel and PowerPoint files, scans, web pages, Markdown or text: drop them on the window or press {key}. Every answer shows the pages it used.</source>
        <translation>PDF、电子书、Word、Excel 和 PowerPoint 文件、扫描件、网页、Markdown 或纯文本：拖到窗口上或按 {key}。每个回答都会注明所用的页码。</translation>
    </message>
    <message>
        <source>Cloud is optional</source>
        <translation>云端可选</translation>
    </message>
    <message>
        <source>For hard questions you can add a cloud model (OpenAI, OpenRouter, DeepSeek, your team&apos;s server…). You decide when a question may leave this computer; its key stays in the system keychain.</source>
        <translation>遇到难题时，你可以添加云端模型（OpenAI、OpenRouter、DeepSeek、团队自己的服务器…）。由你决定问题何时可以离开本机；密钥保存在系统钥匙串中。</translation>
    </message>
    <message>
        <source>This computer</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>Measuring this computer&apos;s speed</source>
        <translation>正在测量本机速度</translation>
    </message>
    <message>
        <source>Measuring how fast this computer runs the local model (a few seconds)…</source>
        <translation>正在测量本机运行本地模型的速度（几秒钟）…</translation>
    </message>
    <message>
        <source>A short guide is being added to your library…</source>
        <translation>一份简短的指南正在加入文档库…</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Show or hide the details</source>
        <translation>显示或隐藏详情</translation>
    </message>
    <message>
        <source>Set up a cloud model…</source>
        <translation>设置云端模型…</translation>
    </message>
    <message>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <source>Local model: {title}, {size} MB, licence {licence}. It runs on the processor. Larger models, for a computer with a graphics card, are in Models…</source>
        <translation>本地模型：{title}，{size} MB，许可证 {licence}。它在处理器上运行。适合配备显卡的电脑的更大模型，见“模型…”</translation>
    </message>
    <message>
        <source>Search: {title}.</source>
        <translation>搜索：{title}。</translation>
    </message>
    <message>
        <source>Your library and history</source>
        <translation>你的文档库和历史记录</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>Open the folder: {what}</source>
        <translation>打开文件夹：{what}</translation>
    </message>
    <message>
        <source>Docent writes nowhere else.</source>
        <translation>Docent 不会写入其他任何位置。</translation>
    </message>
    <message>
        <source>Docent could not measure this computer&apos;s speed: {why}</source>
        <translation>Docent 无法测量本机速度：{why}</translation>
    </message>
    <message>
        <source>The guide is in your library: try the questions the window offers.</source>
        <translation>指南已加入文档库：试试窗口中推荐的问题。</translation>
    </message>
    <message>
        <source>Not measured yet.</source>
        <translation>尚未测量。</translation>
    </message>
    <message>
        <source>This computer is fast enough for {model}, which answers better: Docent switches to it once it is ready.</source>
        <translation>本机的速度足以运行回答更好的 {model}：准备就绪后 Docent 会切换过去。</translation>
    </message>
    <message>
        <source>On this computer, {model} starts answering in about {seconds} s.</source>
        <translation>在本机上，{model} 约 {seconds} 秒后开始回答。</translation>
    </message>
</context>
<context>
    <name>IndexingBar</name>
    <message>
        <source>Indexing progress</source>
        <translation>索引进度</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Pause indexing; it stays paused until resumed, even after a quit</source>
        <translation>暂停索引；在点“继续”之前会一直暂停，退出后也是如此</translation>
    </message>
    <message>
        <source>Indexing paused</source>
        <translation>索引已暂停</translation>
    </message>
    <message>
        <source>Indexing paused · 1 file waits</source>
        <translation>索引已暂停 · 1 个文件等待中</translation>
    </message>
    <message>
        <source>Indexing paused · {n} files wait</source>
        <translation>索引已暂停 · {n} 个文件等待中</translation>
    </message>
    <message>
        <source>Indexing…</source>
        <translation>正在索引…</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>{done}/{total} files</source>
        <translation>{done}/{total} 个文件</translation>
    </message>
    <message>
        <source>{done}/{total} chunks embedded</source>
        <translation>已向量化 {done}/{total} 个段落</translation>
    </message>
    <message>
        <source>{rate} pages/s</source>
        <translation>{rate} 页/秒</translation>
    </message>
    <message>
        <source>{left}, then embedding</source>
        <translation>{left}，之后进行向量化</translation>
    </message>
    <message>
        <source>a few seconds left</source>
        <translation>还剩几秒</translation>
    </message>
    <message>
        <source>about {n} s left</source>
        <translation>约剩 {n} 秒</translation>
    </message>
    <message>
        <source>about {n} min left</source>
        <translation>约剩 {n} 分钟</translation>
    </message>
    <message>
        <source>about {h} h {m} min left</source>
        <translation>约剩 {h} 小时 {m} 分钟</translation>
    </message>
    <message>
        <source>about {h} h left</source>
        <translation>约剩 {h} 小时</translation>
    </message>
</context>
<context>
    <name>KeychainNotice</name>
    <message>
        <source>Looking for the keychain…</source>
        <translation>正在查找钥匙串…</translation>
    </message>
    <message>
        <source>Keep keys in a plain-text file that only my user can read (NOT encrypted)</source>
        <translation>将密钥保存在仅我的用户可读的纯文本文件中（未加密）</translation>
    </message>
</context>
<context>
    <name>LibraryPane</name>
    <message>
        <source>Add…</source>
        <translation>添加…</translation>
    </message>
    <message>
        <source>Add documents</source>
        <translation>添加文档</translation>
    </message>
    <message>
        <source>Add documents ({key})</source>
        <translation>添加文档（{key}）</translation>
    </message>
    <message>
        <source>Filter by name</source>
        <translation>按名称筛选</translation>
    </message>
    <message>
        <source>Filter documents by name</source>
        <translation>按名称筛选文档</translation>
    </message>
    <message>
        <source>Library · {total}</source>
        <translation>文档库 · {total}</translation>
    </message>
    <message>
        <source>Library · {shown} of {total}</source>
        <translation>文档库 · {shown}/{total}</translation>
    </message>
</context>
<context>
    <name>LibraryProblemBar</name>
    <message>
        <source>The shared library could not be opened</source>
        <translation>无法打开共享文档库</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Settings…</source>
        <translation>设置…</translation>
    </message>
    <message>
        <source>The shared library {location} could not be opened: {reason} This window shows the library on this computer; documents added now go there.</source>
        <translation>无法打开共享文档库 {location}：{reason} 此窗口显示的是本机的文档库；现在添加的文档会存入本机。</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Exported the conversation to {path}</source>
        <translation>对话已导出到 {path}</translation>
    </message>
    <message>
        <source>Add documents…</source>
        <translation>添加文档…</translation>
    </message>
    <message>
        <source>Models…</source>
        <translation>模型…</translation>
    </message>
    <message>
        <source>Benchmark…</source>
        <translation>基准测试…</translation>
    </message>
    <message>
        <source>Settings…</source>
        <translation>设置…</translation>
    </message>
    <message>
        <source>Drop documents here, or press Ctrl+O.</source>
        <translation>将文档拖到这里，或按 Ctrl+O。</translation>
    </message>
    <message>
        <source>Failed: {error}</source>
        <translation>失败：{error}</translation>
    </message>
    <message>
        <source>Library: 1 document</source>
        <translation>文档库：1 个文档</translation>
    </message>
    <message>
        <source>Library: {n} documents</source>
        <translation>文档库：{n} 个文档</translation>
    </message>
    <message>
        <source>loading…</source>
        <translation>加载中…</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>ready, safe settings</source>
        <translation>就绪，安全设置</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Local model: {model} ({state})</source>
        <translation>本地模型：{model}（{state}）</translation>
    </message>
    <message>
        <source>the library&apos;s file: {size:.1f} MB</source>
        <translation>文档库文件：{size:.1f} MB</translation>
    </message>
    <message>
        <source>Shared library: 1 document</source>
        <translation>共享文档库：1 个文档</translation>
    </message>
    <message>
        <source>Shared library: {n} documents</source>
        <translation>共享文档库：{n} 个文档</translation>
    </message>
    <message>
        <source>the shared library: {location}</source>
        <translation>共享文档库：{location}</translation>
    </message>
    <message>
        <source>{chunks} passages to search; {where}</source>
        <translation>可搜索 {chunks} 个段落；{where}</translation>
    </message>
    <message>
        <source>Runs on: {state}</source>
        <translation>运行于：{state}</translation>
    </message>
    <message>
        <source>not asked yet</source>
        <translation>尚未请求</translation>
    </message>
    <message>
        <source>reachable</source>
        <translation>可连接</translation>
    </message>
    <message>
        <source>unreachable</source>
        <translation>无法连接</translation>
    </message>
    <message>
        <source>Model server: {model} ({state})</source>
        <translation>模型服务器：{model}（{state}）</translation>
    </message>
    <message>
        <source>When it cannot answer, {model} on this computer does ({state}).</source>
        <translation>它无法回答时，由本机的 {model} 回答（{state}）。</translation>
    </message>
    <message>
        <source>Last request: {error}</source>
        <translation>上次请求：{error}</translation>
    </message>
    <message>
        <source>Cloud: not set up</source>
        <translation>云端：未设置</translation>
    </message>
    <message>
        <source>Click to add a provider or an MCP server in Settings.</source>
        <translation>点击在设置中添加服务商或 MCP 服务器。</translation>
    </message>
    <message>
        <source>Cloud: {ready}/{total} ready</source>
        <translation>云端：{ready}/{total} 就绪</translation>
    </message>
    <message>
        <source>Preparing the local model the speed check chose: {percent}%…</source>
        <translation>正在准备速度检测选定的本地模型：{percent}%…</translation>
    </message>
    <message>
        <source>Add documents</source>
        <translation>添加文档</translation>
    </message>
    <message>
        <source>Removed 1 document.</source>
        <translation>已移除 1 个文档。</translation>
    </message>
    <message>
        <source>Removed {count} documents.</source>
        <translation>已移除 {count} 个文档。</translation>
    </message>
    <message>
        <source>1 answer in your conversations and history quotes the removed document. Delete it too?</source>
        <translation>你的对话和历史记录中有 1 个回答引用了被移除的文档。是否一并删除？</translation>
    </message>
    <message>
        <source>{count} answers in your conversations and history quote the removed document. Delete them too?</source>
        <translation>你的对话和历史记录中有 {count} 个回答引用了被移除的文档。是否一并删除？</translation>
    </message>
    <message>
        <source>Removed document</source>
        <translation>已移除的文档</translation>
    </message>
    <message>
        <source>Either way, a follow-up question never sends the removed document&apos;s text again.</source>
        <translation>无论如何，后续提问都不会再发送被移除文档的文字。</translation>
    </message>
    <message>
        <source>Delete 1 answer</source>
        <translation>删除 1 个回答</translation>
    </message>
    <message>
        <source>Delete {count} answers</source>
        <translation>删除 {count} 个回答</translation>
    </message>
    <message>
        <source>Keep</source>
        <translation>保留</translation>
    </message>
    <message>
        <source>Deleted {count} answer(s) quoting it.</source>
        <translation>已删除 {count} 个引用它的回答。</translation>
    </message>
    <message>
        <source>Failed to show indexing: {error}</source>
        <translation>无法显示索引进度：{error}</translation>
    </message>
    <message>
        <source>{file} failed: {reason}</source>
        <translation>{file} 失败：{reason}</translation>
    </message>
    <message>
        <source>OCR of {file}, page {page}: {reason}</source>
        <translation>{file} 第 {page} 页的 OCR：{reason}</translation>
    </message>
    <message>
        <source>{indexed} documents added, {failed} failed</source>
        <translation>已添加 {indexed} 个文档，{failed} 个失败</translation>
    </message>
    <message>
        <source>Embedding {done}/{total} chunks…</source>
        <translation>正在嵌入 {done}/{total} 个片段…</translation>
    </message>
    <message>
        <source>Semantic search is not up to date: {reason}</source>
        <translation>语义搜索未更新：{reason}</translation>
    </message>
    <message>
        <source>Library up to date.</source>
        <translation>文档库已是最新。</translation>
    </message>
    <message>
        <source>Local model</source>
        <translation>本地模型</translation>
    </message>
    <message>
        <source>Local model: now {model}.</source>
        <translation>本地模型：现为 {model}。</translation>
    </message>
    <message>
        <source>Settings applied.</source>
        <translation>设置已应用。</translation>
    </message>
    <message>
        <source>Opening the library…</source>
        <translation>正在打开文档库…</translation>
    </message>
    <message>
        <source>What was sent to the cloud</source>
        <translation>发送到云端的内容</translation>
    </message>
    <message>
        <source>{title} — Docent</source>
        <translation>{title} — Docent</translation>
    </message>
    <message>
        <source>Editing a question: sending it replaces its answer and the ones after it</source>
        <translation>正在编辑问题：发送后将替换它的回答及之后的所有回答</translation>
    </message>
    <message>
        <source>Your answer is ready: {question}</source>
        <translation>你的回答已就绪：{question}</translation>
    </message>
    <message>
        <source>The answer failed: {error}</source>
        <translation>回答失败：{error}</translation>
    </message>
</context>
<context>
    <name>McpServing</name>
    <message>
        <source>MCP server: on</source>
        <translation>MCP 服务器：开启</translation>
    </message>
    <message>
        <source>Other MCP clients can use this library at {url}
Settings → Integrations → Serve over MCP shows the configuration to paste into them.</source>
        <translation>其他 MCP 客户端可通过 {url} 使用此文档库
设置 → 集成 → 通过 MCP 提供 中有可粘贴到客户端的配置。</translation>
    </message>
    <message>
        <source>MCP server: failed</source>
        <translation>MCP 服务器：失败</translation>
    </message>
</context>
<context>
    <name>ModelChecklist</name>
    <message>
        <source>Models this provider answers with</source>
        <translation>此服务商用于回答的模型</translation>
    </message>
    <message>
        <source>Another model, by name</source>
        <translation>按名称添加其他模型</translation>
    </message>
    <message>
        <source>Model name to add</source>
        <translation>要添加的模型名称</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Add the model typed</source>
        <translation>添加输入的模型</translation>
    </message>
    <message>
        <source>Fetch models</source>
        <translation>获取模型</translation>
    </message>
    <message>
        <source>Ask the provider which models it serves</source>
        <translation>向服务商查询其提供的模型</translation>
    </message>
    <message>
        <source>The provider answered but does not list its models: type them.</source>
        <translation>服务商已响应，但未列出模型：请手动输入。</translation>
    </message>
    <message>
        <source>{n} models served: tick the ones Docent may use.</source>
        <translation>提供 {n} 个模型：勾选 Docent 可以使用的模型。</translation>
    </message>
    <message>
        <source>1 model served: tick it if Docent may use it.</source>
        <translation>提供 1 个模型：如果 Docent 可以使用，请勾选。</translation>
    </message>
    <message>
        <source>Could not fetch the models: {why}.</source>
        <translation>无法获取模型：{why}。</translation>
    </message>
    <message>
        <source>⚠ no price: cost unknown</source>
        <translation>⚠ 无价格：费用未知</translation>
    </message>
    <message>
        <source>${input:g} in, ${output:g} out per million tokens</source>
        <translation>每百万 token：输入 ${input:g}，输出 ${output:g}</translation>
    </message>
</context>
<context>
    <name>ModelManager</name>
    <message>
        <source>Failed: {error}</source>
        <translation>失败：{error}</translation>
    </message>
    <message>
        <source>Models — Docent</source>
        <translation>模型 — Docent</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>RAM needed</source>
        <translation>所需内存</translation>
    </message>
    <message>
        <source>Answers right</source>
        <translation>回答正确率</translation>
    </message>
    <message>
        <source>On this computer</source>
        <translation>在本机上</translation>
    </message>
    <message>
        <source>Licence</source>
        <translation>许可证</translation>
    </message>
    <message>
        <source>Docent&apos;s evaluation: {questions}</source>
        <translation>Docent 的评测：{questions}</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <source>Use this model</source>
        <translation>使用此模型</translation>
    </message>
    <message>
        <source>Use my own GGUF file…</source>
        <translation>使用我自己的 GGUF 文件…</translation>
    </message>
    <message>
        <source>Open models folder</source>
        <translation>打开模型文件夹</translation>
    </message>
    <message>
        <source>Where downloads go, and where your own GGUF files may live</source>
        <translation>下载保存的位置，也可存放你自己的 GGUF 文件</translation>
    </message>
    <message>
        <source>Larger models answer better and need more memory.</source>
        <translation>更大的模型回答更好，但需要更多内存。</translation>
    </message>
    <message>
        <source>first words in {seconds} s, {rate} tokens/s</source>
        <translation>{seconds} 秒出首字，{rate} token/秒</translation>
    </message>
    <message>
        <source>Predicted from the speed check of {date}, for a question with {tokens} tokens of sources</source>
        <translation>根据 {date} 的速度检测预测，以来源文字为 {tokens} 个 token 的问题计</translation>
    </message>
    <message>
        <source>{model} — recommended</source>
        <translation>{model} — 推荐</translation>
    </message>
    <message>
        <source>in use</source>
        <translation>使用中</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>paused at {percent}%</source>
        <translation>已暂停于 {percent}%</translation>
    </message>
    <message>
        <source>not downloaded</source>
        <translation>未下载</translation>
    </message>
    <message>
        <source>missing</source>
        <translation>缺失</translation>
    </message>
    <message>
        <source>downloading…</source>
        <translation>下载中…</translation>
    </message>
    <message>
        <source>Recommended for this computer: {model}, {right} of answers right vs {right_now} for {now}, first words in about {seconds} s.</source>
        <translation>推荐本机使用：{model}，回答正确率 {right}（{now} 为 {right_now}），约 {seconds} 秒出首字。</translation>
    </message>
    <message>
        <source>Use it</source>
        <translation>使用</translation>
    </message>
    <message>
        <source>Download and use it</source>
        <translation>下载并使用</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Connecting to {url}…</source>
        <translation>正在连接 {url}…</translation>
    </message>
    <message>
        <source>{model}: paused. Resume continues where it stopped.</source>
        <translation>{model}：已暂停。点“继续”将从中断处接着下载。</translation>
    </message>
    <message>
        <source>{model} is downloaded and verified (sha256). Use it when you like.</source>
        <translation>{model} 已下载并校验（sha256）。随时可以使用。</translation>
    </message>
    <message>
        <source>Checking the {done} MB downloaded earlier before resuming…</source>
        <translation>继续之前，正在校验先前下载的 {done} MB…</translation>
    </message>
    <message>
        <source>Another Docent window or command is downloading it: {done} of {total} MB…</source>
        <translation>另一个 Docent 窗口或命令正在下载它：{done} / {total} MB…</translation>
    </message>
    <message>
        <source>{done} of {total} MB · {rate} MB/s · {left} s left</source>
        <translation>{done} / {total} MB · {rate} MB/秒 · 剩余 {left} 秒</translation>
    </message>
    <message>
        <source>Your own model</source>
        <translation>你自己的模型</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF 模型 (*.gguf)</translation>
    </message>
    <message>
        <source>Loading {model}…</source>
        <translation>正在加载 {model}…</translation>
    </message>
    <message>
        <source>Cannot use {model}: {error}</source>
        <translation>无法使用 {model}：{error}</translation>
    </message>
    <message>
        <source>Docent now answers with {model}.</source>
        <translation>Docent 现在使用 {model} 回答。</translation>
    </message>
</context>
<context>
    <name>Notifications</name>
    <message>
        <source>Notifications: {count}</source>
        <translation>通知：{count}</translation>
    </message>
    <message>
        <source>No notifications</source>
        <translation>没有通知</translation>
    </message>
    <message>
        <source>Clear all</source>
        <translation>全部清除</translation>
    </message>
</context>
<context>
    <name>OpeningNotice</name>
    <message>
        <source>Opening the shared library {location}…</source>
        <translation>正在打开共享文档库 {location}…</translation>
    </message>
</context>
<context>
    <name>PagePreview</name>
    <message>
        <source>{file} — Docent</source>
        <translation>{file} — Docent</translation>
    </message>
    <message>
        <source>Page image</source>
        <translation>页面图像</translation>
    </message>
    <message>
        <source>Page</source>
        <translation>页</translation>
    </message>
    <message>
        <source>Copy passage</source>
        <translation>复制段落</translation>
    </message>
    <message>
        <source>Previous page</source>
        <translation>上一页</translation>
    </message>
    <message>
        <source>Next page</source>
        <translation>下一页</translation>
    </message>
    <message>
        <source>Zoom out</source>
        <translation>缩小</translation>
    </message>
    <message>
        <source>Zoom in</source>
        <translation>放大</translation>
    </message>
    <message>
        <source>Fit to width</source>
        <translation>适合宽度</translation>
    </message>
    <message>
        <source>Open in system viewer</source>
        <translation>用系统查看器打开</translation>
    </message>
    <message>
        <source>Source [{number}] — {file}, {page}</source>
        <translation>来源 [{number}] — {file}，{page}</translation>
    </message>
    <message>
        <source> · the sentences used highlighted</source>
        <translation> · 已高亮所用的句子</translation>
    </message>
    <message>
        <source> · cited passage highlighted</source>
        <translation> · 已高亮引用的段落</translation>
    </message>
    <message>
        <source>{label} (page {page} of {pages}) · {zoom}</source>
        <translation>{label}（第 {page} 页，共 {pages} 页）· {zoom}</translation>
    </message>
    <message>
        <source>cannot show this page: {error}</source>
        <translation>无法显示此页：{error}</translation>
    </message>
</context>
<context>
    <name>QuestionBox</name>
    <message>
        <source>Ask about your documents… (Enter sends, Shift+Enter: new line)</source>
        <translation>询问你的文档…（Enter 发送，Shift+Enter 换行）</translation>
    </message>
    <message>
        <source>Question</source>
        <translation>问题</translation>
    </message>
</context>
<context>
    <name>RouteBadge</name>
    <message>
        <source>{model} on {host}</source>
        <translation>{host} 上的 {model}</translation>
    </message>
    <message>
        <source>on this computer</source>
        <translation>在本机</translation>
    </message>
    <message>
        <source>an earlier answer, again</source>
        <translation>之前的回答，再次使用</translation>
    </message>
    <message>
        <source>cost unknown</source>
        <translation>费用未知</translation>
    </message>
    <message>
        <source>free</source>
        <translation>免费</translation>
    </message>
    <message>
        <source>Why this route</source>
        <translation>为何选择此路线</translation>
    </message>
    <message>
        <source>What was sent…</source>
        <translation>发送了什么…</translation>
    </message>
    <message>
        <source>Route and timings</source>
        <translation>路线与耗时</translation>
    </message>
    <message>
        <source>Why this route, and what it cost: click, or press Enter</source>
        <translation>为何选择此路线、花费多少：点击或按 Enter</translation>
    </message>
    <message>
        <source>first token: the wait until the answer&apos;s first word
then the whole answer&apos;s time, and how fast it was written (tokens a second)</source>
        <translation>首字：等到回答第一个字的时间
然后是整个回答的用时，以及生成速度（每秒 token 数）</translation>
    </message>
    <message>
        <source>Set up a cloud model to send questions like this there</source>
        <translation>设置云端模型，让这类问题交给它回答</translation>
    </message>
    <message>
        <source>first token {ttft} · {total} · {rate} ·</source>
        <translation>首字 {ttft} · {total} · {rate} ·</translation>
    </message>
    <message>
        <source>failed: {error}</source>
        <translation>失败：{error}</translation>
    </message>
    <message>
        <source>Route</source>
        <translation>路线</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Why</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Searched for</source>
        <translation>搜索内容</translation>
    </message>
    <message>
        <source>A follow-up, as the documents were searched for it</source>
        <translation>追问在搜索文档时的完整形式</translation>
    </message>
    <message>
        <source>First token</source>
        <translation>首字</translation>
    </message>
    <message>
        <source>The wait until the answer&apos;s first word</source>
        <translation>等到回答第一个字的时间</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>总计</translation>
    </message>
    <message>
        <source>Speed</source>
        <translation>速度</translation>
    </message>
    <message>
        <source>How fast the answer was written: tokens (word pieces) a second</source>
        <translation>回答的生成速度：每秒 token（词片）数</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>Token</translation>
    </message>
    <message>
        <source>{sent} in · {written} out</source>
        <translation>输入 {sent} · 输出 {written}</translation>
    </message>
    <message>
        <source>In: the question and the passages read; out: the answer written</source>
        <translation>输入：问题和读取的段落；输出：写出的回答</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>费用</translation>
    </message>
    <message>
        <source>This month</source>
        <translation>本月</translation>
    </message>
    <message>
        <source>Cloud spending after this answer</source>
        <translation>此回答之后的云端花费</translation>
    </message>
    <message>
        <source>first token {seconds} s…</source>
        <translation>首字 {seconds} 秒…</translation>
    </message>
    <message>
        <source>first token {seconds} s · {tokens} tokens</source>
        <translation>首字 {seconds} 秒 · {tokens} 个 token</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Why this route…</source>
        <translation>为何选择此路线…</translation>
    </message>
</context>
<context>
    <name>RouteReason</name>
    <message>
        <source>you asked for this computer</source>
        <translation>你要求在本机回答</translation>
    </message>
    <message>
        <source>you asked for the cloud</source>
        <translation>你要求由云端回答</translation>
    </message>
    <message>
        <source>route set to This computer only</source>
        <translation>路线设为“仅本机”</translation>
    </message>
    <message>
        <source>route set to Cloud only</source>
        <translation>路线设为“仅云端”</translation>
    </message>
    <message>
        <source>no cloud set up</source>
        <translation>未设置云端</translation>
    </message>
    <message>
        <source>no cloud set up · looked hard: {parts}</source>
        <translation>未设置云端 · 看起来较难：{parts}</translation>
    </message>
    <message>
        <source>privacy: nothing leaves this computer</source>
        <translation>隐私：任何内容都不离开本机</translation>
    </message>
    <message>
        <source>you asked for your model server</source>
        <translation>你要求在你的模型服务器回答</translation>
    </message>
    <message>
        <source>route set to Your model server only</source>
        <translation>路线设为“仅你的模型服务器”</translation>
    </message>
    <message>
        <source>privacy: kept on your model server (no cloud)</source>
        <translation>隐私：留在你的模型服务器（不用云端）</translation>
    </message>
    <message>
        <source>cloud unavailable · {down}</source>
        <translation>云端不可用 · {down}</translation>
    </message>
    <message>
        <source>this month&apos;s cloud budget (${budget_usd:.2f}) is spent</source>
        <translation>本月云端预算（${budget_usd:.2f}）已用完</translation>
    </message>
    <message>
        <source>{parts}</source>
        <translation>{parts}</translation>
    </message>
    <message>
        <source>simple question · {parts}</source>
        <translation>简单问题 · {parts}</translation>
    </message>
    <message>
        <source>strong evidence</source>
        <translation>证据充分</translation>
    </message>
    <message>
        <source>the local draft {parts}: the cloud answered</source>
        <translation>本地草稿{parts}：改由云端回答</translation>
    </message>
    <message>
        <source>was empty</source>
        <translation>为空</translation>
    </message>
    <message>
        <source>was {grounded:.0%} grounded in the sources (below {floor:.0%})</source>
        <translation>仅有 {grounded:.0%} 有来源依据（低于 {floor:.0%}）</translation>
    </message>
    <message>
        <source>the local model failed ({error}): the cloud answered</source>
        <translation>本地模型出错（{error}）：改由云端回答</translation>
    </message>
    <message>
        <source>the cloud failed before its first word ({error}): the local model answered</source>
        <translation>云端在输出首字前失败（{error}）：改由本地模型回答</translation>
    </message>
    <message>
        <source>the model server failed before its first word ({error}): answered on this computer</source>
        <translation>模型服务器在输出首字前失败（{error}）：改在本机回答</translation>
    </message>
    <message>
        <source>asked {age_s:.0f} s ago · kept for {ttl_s:g} s</source>
        <translation>{age_s:.0f} 秒前问过 · 缓存 {ttl_s:g} 秒</translation>
    </message>
    <message>
        <source>summaries are written on this computer unless you pick a cloud model</source>
        <translation>除非选择云端模型，摘要都在本机生成</translation>
    </message>
    <message>
        <source>summaries are written on your model server unless you pick a cloud model</source>
        <translation>除非选择云端模型，摘要都在你的模型服务器生成</translation>
    </message>
    <message>
        <source>stored when it was made · made again if the document changes</source>
        <translation>生成时已保存 · 文档变化时会重新生成</translation>
    </message>
    <message>
        <source>privacy is set to never send anything to the cloud</source>
        <translation>隐私设置为从不向云端发送任何内容</translation>
    </message>
    <message>
        <source>no cloud set up: add a provider or an MCP server in Settings</source>
        <translation>未设置云端：请在设置中添加服务商或 MCP 服务器</translation>
    </message>
    <message>
        <source>every cloud route is down · {down}</source>
        <translation>所有云端路线都不可用 · {down}</translation>
    </message>
    <message>
        <source>{count}-part question</source>
        <translation>包含 {count} 个小问题</translation>
    </message>
    <message>
        <source>asks for a comparison</source>
        <translation>要求比较</translation>
    </message>
    <message>
        <source>asks why</source>
        <translation>询问原因</translation>
    </message>
    <message>
        <source>needs a computation</source>
        <translation>需要计算</translation>
    </message>
    <message>
        <source>is about code</source>
        <translation>涉及代码</translation>
    </message>
    <message>
        <source>long question ({tokens} tokens)</source>
        <translation>问题较长（{tokens} 个 token）</translation>
    </message>
    <message>
        <source>weak evidence (best match {similarity:.2f})</source>
        <translation>证据较弱（最佳匹配 {similarity:.2f}）</translation>
    </message>
    <message>
        <source>ambiguous evidence (top passages tie)</source>
        <translation>证据不明确（排名靠前的段落不相上下）</translation>
    </message>
    <message>
        <source>evidence spans {documents} documents</source>
        <translation>证据分布在 {documents} 个文档中</translation>
    </message>
    <message>
        <source>looked hard: {parts}</source>
        <translation>看起来较难：{parts}</translation>
    </message>
</context>
<context>
    <name>RoutingPage</name>
    <message>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Each question on your model server, unless it looks hard for its model and the cloud is allowed, reachable and within budget.</source>
        <translation>每个问题都在你的模型服务器上回答，除非它对该模型显得太难，且云端获准使用、可以连通并在预算之内。</translation>
    </message>
    <message>
        <source>Each question on this computer, unless it looks hard for the local model and the cloud is allowed, reachable and within budget.</source>
        <translation>每个问题都在本机回答，除非它对本地模型来说较难，且云端已允许、可连接并在预算之内。</translation>
    </message>
    <message>
        <source>Your model server only</source>
        <translation>仅你的模型服务器</translation>
    </message>
    <message>
        <source>Every answer is written on your model server; nothing goes to a cloud.</source>
        <translation>每个回答都由你的模型服务器写出；不会发送到任何云端。</translation>
    </message>
    <message>
        <source>This computer only</source>
        <translation>仅本机</translation>
    </message>
    <message>
        <source>Every answer is written by the local model; nothing is sent anywhere.</source>
        <translation>所有回答都由本地模型生成；不会发送任何内容。</translation>
    </message>
    <message>
        <source>Cloud only</source>
        <translation>仅云端</translation>
    </message>
    <message>
        <source>Every answer is written by a cloud model (the local one when the cloud fails before its first word).</source>
        <translation>所有回答都由云端模型生成（云端在输出首字前失败时改用本地模型）。</translation>
    </message>
    <message>
        <source>Nothing goes to a cloud</source>
        <translation>不发送到云端</translation>
    </message>
    <message>
        <source>The cloud is never used, whatever the route says: questions go to your model server.</source>
        <translation>无论路由如何，都不使用云端：问题发往你的模型服务器。</translation>
    </message>
    <message>
        <source>Nothing leaves this computer</source>
        <translation>任何内容都不离开本机</translation>
    </message>
    <message>
        <source>The cloud is never used, whatever the route says.</source>
        <translation>无论路线如何设置，都不使用云端。</translation>
    </message>
    <message>
        <source>Excerpts only</source>
        <translation>仅摘录</translation>
    </message>
    <message>
        <source>A cloud model sees the question and the retrieved excerpts: no file names, no earlier turns.</source>
        <translation>云端模型只能看到问题和检索到的摘录：没有文件名，也没有之前的对话。</translation>
    </message>
    <message>
        <source>Excerpts and titles</source>
        <translation>摘录和标题</translation>
    </message>
    <message>
        <source>Also the documents&apos; names, pages and headings, and the conversation&apos;s earlier turns.</source>
        <translation>还包括文档的名称、页码和标题，以及对话中之前的内容。</translation>
    </message>
    <message>
        <source>Answer locally first; ask the cloud when the draft fails its check</source>
        <translation>先在本机回答；草稿未通过检查时再询问云端</translation>
    </message>
    <message>
        <source>Cloud model per topic</source>
        <translation>按主题选择云端模型</translation>
    </message>
    <message>
        <source>Monthly cloud budget</source>
        <translation>每月云端预算</translation>
    </message>
    <message>
        <source>Answer cache lifetime (0 = off)</source>
        <translation>回答缓存时长（0 = 关闭）</translation>
    </message>
    <message>
        <source>Model per topic (topic=model per line)</source>
        <translation>按主题的模型（每行一个 topic=model）</translation>
    </message>
    <message>
        <source>Who writes the answers</source>
        <translation>由谁生成回答</translation>
    </message>
    <message>
        <source>What a cloud model may see</source>
        <translation>云端模型可以看到什么</translation>
    </message>
    <message>
        <source>Try a question</source>
        <translation>试一个问题</translation>
    </message>
    <message>
        <source>A question about your documents</source>
        <translation>一个关于你的文档的问题</translation>
    </message>
    <message>
        <source>Question to try</source>
        <translation>要试的问题</translation>
    </message>
    <message>
        <source>Which route?</source>
        <translation>走哪条路线？</translation>
    </message>
    <message>
        <source>Search the library and ask the router, with the choices above; no answer is written and nothing is sent</source>
        <translation>按上面的选项搜索文档库并询问路由器；不会生成回答，也不会发送任何内容</translation>
    </message>
    <message>
        <source>Route the router would choose</source>
        <translation>路由器会选择的路线</translation>
    </message>
    <message>
        <source>Searching the library…</source>
        <translation>正在搜索文档库…</translation>
    </message>
    <message>
        <source>Fix this first: {error}</source>
        <translation>请先修正：{error}</translation>
    </message>
    <message>
        <source>On your model server, with {model}</source>
        <translation>在你的模型服务器，使用 {model}</translation>
    </message>
    <message>
        <source>On this computer, with {model}</source>
        <translation>在本机，使用 {model}</translation>
    </message>
    <message>
        <source>In the cloud, with {model}</source>
        <translation>在云端，使用 {model}</translation>
    </message>
    <message>
        <source>No passage matches: the answer would say the documents do not tell.</source>
        <translation>没有匹配的段落：回答会说明文档中没有相关内容。</translation>
    </message>
    <message>
        <source>Found {passages} in {documents}.</source>
        <translation>在 {documents}中找到 {passages}。</translation>
    </message>
    <message>
        <source>1 passage</source>
        <translation>1 个段落</translation>
    </message>
    <message>
        <source>{n} passages</source>
        <translation>{n} 个段落</translation>
    </message>
    <message>
        <source>1 document</source>
        <translation>1 个文档</translation>
    </message>
    <message>
        <source>{n} documents</source>
        <translation>{n} 个文档</translation>
    </message>
    <message>
        <source>{where}.
Why: {reason}.
{found}
No answer was written.</source>
        <translation>{where}。
原因：{reason}。
{found}
未生成回答。</translation>
    </message>
</context>
<context>
    <name>ScopeChip</name>
    <message>
        <source>The documents the question reads: tick them here or in the Documents list</source>
        <translation>问题要读取的文档：在这里或文档列表中勾选</translation>
    </message>
    <message>
        <source>All documents ({n})</source>
        <translation>全部文档（{n}）</translation>
    </message>
    <message>
        <source>All documents</source>
        <translation>全部文档</translation>
    </message>
    <message>
        <source>{n} documents</source>
        <translation>{n} 个文档</translation>
    </message>
    <message>
        <source>Documents to ask: {scope}</source>
        <translation>提问的文档：{scope}</translation>
    </message>
    <message>
        <source>{n} more: tick them in the Documents list…</source>
        <translation>还有 {n} 个：在文档列表中勾选…</translation>
    </message>
</context>
<context>
    <name>ServerModelBox</name>
    <message>
        <source>Answer with a model on a server you run</source>
        <translation>用你自己运行的服务器上的模型回答</translation>
    </message>
    <message>
        <source>for example http://192.168.1.5:8080/v1</source>
        <translation>例如 http://192.168.1.5:8080/v1</translation>
    </message>
    <message>
        <source>Server address</source>
        <translation>服务器地址</translation>
    </message>
    <message>
        <source>Presets</source>
        <translation>预设</translation>
    </message>
    <message>
        <source>The usual address of a model server on this computer</source>
        <translation>本机上模型服务器的常用地址</translation>
    </message>
    <message>
        <source>Model on the server</source>
        <translation>服务器上的模型</translation>
    </message>
    <message>
        <source>Fetch models</source>
        <translation>获取模型</translation>
    </message>
    <message>
        <source>Ask the server which models it serves</source>
        <translation>询问服务器提供哪些模型</translation>
    </message>
    <message>
        <source>None (most servers on your network need none)</source>
        <translation>无（局域网内的服务器大多不需要）</translation>
    </message>
    <message>
        <source>Server key</source>
        <translation>服务器密钥</translation>
    </message>
    <message>
        <source>Private as this computer is: questions never count as cloud, whatever the privacy setting, and cost nothing. When the server does not answer, the model on this computer does, and the answer says why.</source>
        <translation>与本机一样私密：无论隐私设置如何，问题都不算作发往云端，也不产生费用。服务器无应答时，由本机模型回答，并注明原因。</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>密钥</translation>
    </message>
    <message>
        <source>Kept in the keychain: {key}</source>
        <translation>已保存在钥匙串中：{key}</translation>
    </message>
    <message>
        <source>Asking {url} for its models…</source>
        <translation>正在向 {url} 查询模型…</translation>
    </message>
    <message>
        <source>Could not fetch the models: {error}.</source>
        <translation>无法获取模型：{error}。</translation>
    </message>
    <message>
        <source>Models it serves: {count}. Pick the one to answer with.</source>
        <translation>它提供 {count} 个模型，请选择用于回答的模型。</translation>
    </message>
    <message>
        <source>It answers, but does not list its models: type the model&apos;s name.</source>
        <translation>服务器有应答，但没有列出模型：请输入模型名称。</translation>
    </message>
</context>
<context>
    <name>ServingPage</name>
    <message>
        <source>Serve this library to other MCP clients while Docent runs (on this machine only)</source>
        <translation>Docent 运行时向其他 MCP 客户端提供此文档库（仅限本机）</translation>
    </message>
    <message>
        <source>Port on 127.0.0.1</source>
        <translation>127.0.0.1 上的端口</translation>
    </message>
    <message>
        <source>Paste one of these into the MCP configuration of another client (Claude Desktop, Cursor, VS Code, an agent). Tools: search_documents, read_page, list_documents, ask, summarize_document.</source>
        <translation>将其中一段粘贴到其他客户端（Claude Desktop、Cursor、VS Code、智能体）的 MCP 配置中。工具：search_documents、read_page、list_documents、ask、summarize_document。</translation>
    </message>
    <message>
        <source>While Docent runs with the switch on (Streamable HTTP):</source>
        <translation>Docent 运行且开关打开时（Streamable HTTP）：</translation>
    </message>
    <message>
        <source>Or let the client start Docent itself (stdio):</source>
        <translation>或让客户端自己启动 Docent（stdio）：</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
</context>
<context>
    <name>SessionPanel</name>
    <message>
        <source>Show or hide the session&apos;s details</source>
        <translation>显示或隐藏本次会话的详情</translation>
    </message>
    <message>
        <source>Cloud budget used this month</source>
        <translation>本月已用云端预算</translation>
    </message>
    <message>
        <source>Seconds per answer</source>
        <translation>每个回答的秒数</translation>
    </message>
    <message>
        <source>answer</source>
        <translation>回答</translation>
    </message>
    <message>
        <source>Session</source>
        <translation>本次会话</translation>
    </message>
    <message>
        <source>unfolded</source>
        <translation>已展开</translation>
    </message>
    <message>
        <source>folded</source>
        <translation>已折叠</translation>
    </message>
    <message>
        <source>first word</source>
        <translation>首字</translation>
    </message>
    <message>
        <source>whole answer</source>
        <translation>整个回答</translation>
    </message>
    <message>
        <source>1 answer</source>
        <translation>1 个回答</translation>
    </message>
    <message>
        <source>{n} answers</source>
        <translation>{n} 个回答</translation>
    </message>
    <message>
        <source>{spent} of {budget} this month</source>
        <translation>本月 {spent} / {budget}</translation>
    </message>
    <message>
        <source>No answers yet</source>
        <translation>还没有回答</translation>
    </message>
    <message>
        <source> · cost {cost}</source>
        <translation> · 费用 {cost}</translation>
    </message>
    <message>
        <source> + {n} of unknown cost</source>
        <translation> + {n} 个费用未知</translation>
    </message>
    <message>
        <source>This session: {answers}</source>
        <translation>本次会话：{answers}</translation>
    </message>
    <message>
        <source>Cloud budget: {spent} of {budget} this month</source>
        <translation>云端预算：本月 {spent} / {budget}</translation>
    </message>
    <message>
        <source> + 1 answer of unknown cost</source>
        <translation> + 1 个回答费用未知</translation>
    </message>
    <message>
        <source> + {n} answers of unknown cost</source>
        <translation> + {n} 个回答费用未知</translation>
    </message>
    <message>
        <source>{share} of this month&apos;s cloud budget spent</source>
        <translation>本月云端预算已用 {share}</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>CPU threads (0 = all cores)</source>
        <translation>CPU 线程数（0 = 全部核心）</translation>
    </message>
    <message>
        <source>Context size (tokens)</source>
        <translation>上下文大小（token）</translation>
    </message>
    <message>
        <source>Longest answer (tokens)</source>
        <translation>最长回答（token）</translation>
    </message>
    <message>
        <source>Passages per question</source>
        <translation>每个问题的段落数</translation>
    </message>
    <message>
        <source>Source text per prompt (tokens)</source>
        <translation>每次提示的来源文字（token）</translation>
    </message>
    <message>
        <source>Longest time to read one document (s)</source>
        <translation>读取单个文档的最长时间（秒）</translation>
    </message>
    <message>
        <source>Most memory to read one document (MB)</source>
        <translation>读取单个文档的最大内存（MB）</translation>
    </message>
    <message>
        <source>Most an EPUB or XPS unpacks to (MB)</source>
        <translation>EPUB 或 XPS 解压后的最大大小（MB）</translation>
    </message>
    <message>
        <source>Docent settings</source>
        <translation>Docent 设置</translation>
    </message>
    <message>
        <source>Settings pages</source>
        <translation>设置页面</translation>
    </message>
    <message>
        <source>MCP servers</source>
        <translation>MCP 服务器</translation>
    </message>
    <message>
        <source>Serve over MCP</source>
        <translation>通过 MCP 提供</translation>
    </message>
    <message>
        <source>General</source>
        <translation>通用</translation>
    </message>
    <message>
        <source>Local model</source>
        <translation>本地模型</translation>
    </message>
    <message>
        <source>Cloud providers</source>
        <translation>云端服务商</translation>
    </message>
    <message>
        <source>Routing &amp; privacy</source>
        <translation>路由与隐私</translation>
    </message>
    <message>
        <source>Library</source>
        <translation>文档库</translation>
    </message>
    <message>
        <source>Integrations</source>
        <translation>集成</translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation>高级</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>As the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Docent speaks the new language from its next start.</source>
        <translation>新语言将在 Docent 下次启动时生效。</translation>
    </message>
    <message>
        <source>Chat model</source>
        <translation>聊天模型</translation>
    </message>
    <message>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <source>Chat model (catalog name or GGUF file)</source>
        <translation>聊天模型（目录名称或 GGUF 文件）</translation>
    </message>
    <message>
        <source>Measure again</source>
        <translation>重新测量</translation>
    </message>
    <message>
        <source>Time the bundled model on this computer (a few seconds) and choose the default chat model from its speed; a model you chose yourself is kept</source>
        <translation>在本机上测试自带模型的速度（几秒钟），并据此选择默认聊天模型；你自己选择的模型会保留</translation>
    </message>
    <message>
        <source>This computer&apos;s speed</source>
        <translation>本机速度</translation>
    </message>
    <message>
        <source>Runs on: {state}</source>
        <translation>运行于：{state}</translation>
    </message>
    <message>
        <source>Starts with the first question.</source>
        <translation>在第一个问题时启动。</translation>
    </message>
    <message>
        <source>Try the normal settings again</source>
        <translation>重新尝试常规设置</translation>
    </message>
    <message>
        <source>Forget the safe settings Docent chose after the model crashed here; the next question loads it with the normal ones</source>
        <translation>忘掉模型在本机崩溃后 Docent 选用的安全设置；下一个问题将以常规设置加载模型</translation>
    </message>
    <message>
        <source>The local model runs with {mode}.</source>
        <translation>本地模型以{mode}运行。</translation>
    </message>
    <message>
        <source>How it runs here</source>
        <translation>在本机如何运行</translation>
    </message>
    <message>
        <source>Use the GPU (Metal or CUDA builds)</source>
        <translation>使用 GPU（Metal 或 CUDA 版本）</translation>
    </message>
    <message>
        <source>Normal settings: the next question loads the model with them.</source>
        <translation>常规设置：下一个问题将以此加载模型。</translation>
    </message>
    <message>
        <source>Measuring (a few seconds)…</source>
        <translation>正在测量（几秒钟）…</translation>
    </message>
    <message>
        <source>Docent could not measure this computer&apos;s speed: {error}</source>
        <translation>Docent 无法测量本机速度：{error}</translation>
    </message>
    <message>
        <source>OpenAI-compatible providers</source>
        <translation>兼容 OpenAI 的服务商</translation>
    </message>
    <message>
        <source>Add provider</source>
        <translation>添加服务商</translation>
    </message>
    <message>
        <source>Asking {url} for its models…</source>
        <translation>正在向 {url} 查询模型…</translation>
    </message>
    <message>
        <source>Testing…</source>
        <translation>正在测试…</translation>
    </message>
    <message>
        <source>Fix this first: {problem}</source>
        <translation>请先修正：{problem}</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF 模型 (*.gguf)</translation>
    </message>
    <message>
        <source>{keychain} Tick the box below to keep keys in a plain-text file, or leave the key fields empty.</source>
        <translation>{keychain} 勾选下面的选项以将密钥保存在纯文本文件中，或将密钥字段留空。</translation>
    </message>
    <message>
        <source>Failed: {error}</source>
        <translation>失败：{error}</translation>
    </message>
</context>
<context>
    <name>SharedLibraryBox</name>
    <message>
        <source>Use a shared library on PostgreSQL</source>
        <translation>使用 PostgreSQL 上的共享文档库</translation>
    </message>
    <message>
        <source>postgresql://you@server/library</source>
        <translation>postgresql://用户名@服务器/文档库</translation>
    </message>
    <message>
        <source>Shared library address</source>
        <translation>共享文档库地址</translation>
    </message>
    <message>
        <source>None (the server may need none)</source>
        <translation>无（服务器可能不需要）</translation>
    </message>
    <message>
        <source>Shared library password</source>
        <translation>共享文档库密码</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>Connect as Docent would and say what is there; nothing is changed</source>
        <translation>像 Docent 那样连接并说明其中的内容；不会做任何更改</translation>
    </message>
    <message>
        <source>The server keeps each document&apos;s path, title, text and vectors, never the files. Your history, conversations, spending, settings and keys stay on this computer. The window reopens on the library you choose when you press OK.</source>
        <translation>服务器保存每个文档的路径、标题、文字和向量，从不保存文件本身。你的历史记录、对话、花费、设置和密钥都留在本机。按“确定”后，窗口会在你选择的文档库上重新打开。</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>地址</translation>
    </message>
    <message>
        <source>Password</source>
        <translation>密码</translation>
    </message>
    <message>
        <source>Kept in the keychain: {password}</source>
        <translation>已保存在钥匙串中：{password}</translation>
    </message>
    <message>
        <source>Fix this first: {problem}</source>
        <translation>请先修正：{problem}</translation>
    </message>
    <message>
        <source>Type the library&apos;s address first.</source>
        <translation>请先输入文档库的地址。</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <source>Could not connect: {error}</source>
        <translation>无法连接：{error}</translation>
    </message>
    <message>
        <source>Connected to PostgreSQL {server}, but the server lacks pgvector (the vector extension): its administrator installs it.</source>
        <translation>已连接到 PostgreSQL {server}，但服务器缺少 pgvector（vector 扩展）：需由管理员安装。</translation>
    </message>
    <message>
        <source>Connected to PostgreSQL {server}. pgvector {pgvector} is on the server but not yet in this database: Docent adds it when it opens the library if this role may create extensions; otherwise its administrator runs CREATE EXTENSION vector there once.</source>
        <translation>已连接到 PostgreSQL {server}。服务器上有 pgvector {pgvector}，但此数据库中尚未启用：如果此角色可以创建扩展，Docent 会在打开文档库时添加它；否则需由管理员在该数据库中执行一次 CREATE EXTENSION vector。</translation>
    </message>
    <message>
        <source>Connected to PostgreSQL {server} with pgvector {pgvector}. No library there yet: Docent makes its tables when it opens it.</source>
        <translation>已连接到 PostgreSQL {server}（pgvector {pgvector}）。那里还没有文档库：Docent 会在打开时创建所需的表。</translation>
    </message>
    <message>
        <source>Connected to PostgreSQL {server} with pgvector {pgvector}: {count} documents you may read.</source>
        <translation>已连接到 PostgreSQL {server}（pgvector {pgvector}）：你可以读取 {count} 个文档。</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
</context>
<context>
    <name>SourceCard</name>
    <message>
        <source>Source {number}: {where}</source>
        <translation>来源 {number}：{where}</translation>
    </message>
    <message>
        <source>best match</source>
        <translation>最佳匹配</translation>
    </message>
    <message>
        <source>Relevance {score:.3f}{best}: how strongly search ranked this passage for the question (keyword and meaning searches combined). It orders the sources of one answer; it is not a percentage.</source>
        <translation>相关度 {score:.3f}{best}：搜索对此段落与问题相关程度的排名（综合关键词与语义搜索）。它用于排列同一回答的来源，并非百分比。</translation>
    </message>
    <message>
        <source>, the best</source>
        <translation>，最佳</translation>
    </message>
    <message>
        <source>no preview</source>
        <translation>无预览</translation>
    </message>
</context>
<context>
    <name>SummaryDialog</name>
    <message>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <source>Reading the document&apos;s sections…</source>
        <translation>正在读取文档的章节…</translation>
    </message>
    <message>
        <source>Summarize</source>
        <translation>生成摘要</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>This summary is stored: it opens at once.</source>
        <translation>此摘要已保存：会立即打开。</translation>
    </message>
    <message>
        <source>{name}: 1 section</source>
        <translation>{name}：1 个章节</translation>
    </message>
    <message>
        <source>{name}: {sections} sections</source>
        <translation>{name}：{sections} 个章节</translation>
    </message>
    <message>
        <source>, 1 step</source>
        <translation>，1 个步骤</translation>
    </message>
    <message>
        <source>, {steps} steps</source>
        <translation>，{steps} 个步骤</translation>
    </message>
    <message>
        <source>, up to {tokens} tokens to read. Choose where to make it:</source>
        <translation>，最多读取 {tokens} 个 token。选择在哪里生成：</translation>
    </message>
    <message>
        <source>Local model: {estimate}</source>
        <translation>本地模型：{estimate}</translation>
    </message>
    <message>
        <source>price unknown</source>
        <translation>价格未知</translation>
    </message>
    <message>
        <source>at most {cost}</source>
        <translation>最多 {cost}</translation>
    </message>
    <message>
        <source>Cloud {model}: {cost}</source>
        <translation>云端 {model}：{cost}</translation>
    </message>
    <message>
        <source>Cloud: no cloud configured</source>
        <translation>云端：未配置云端</translation>
    </message>
    <message>
        <source>Step {step} of {steps}: {what}</source>
        <translation>第 {step}/{steps} 步：{what}</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>已停止。</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <source>Failed: {error}</source>
        <translation>失败：{error}</translation>
    </message>
    <message>
        <source>Cannot summarize: {error}</source>
        <translation>无法生成摘要：{error}</translation>
    </message>
</context>
<context>
    <name>TurnCard</name>
    <message>
        <source>Question</source>
        <translation>问题</translation>
    </message>
    <message>
        <source>Edit question</source>
        <translation>编辑问题</translation>
    </message>
    <message>
        <source>Copy question</source>
        <translation>复制问题</translation>
    </message>
    <message>
        <source>Previous answer</source>
        <translation>上一个回答</translation>
    </message>
    <message>
        <source>Next answer</source>
        <translation>下一个回答</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>Show two answers side by side</source>
        <translation>并排显示两个回答</translation>
    </message>
    <message>
        <source>Answer {n} of {count}</source>
        <translation>第 {n} 个回答，共 {count} 个</translation>
    </message>
    <message>
        <source>Copy answer with its sources</source>
        <translation>复制回答及其来源</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>⇪ What was sent to the cloud</source>
        <translation>⇪ 发送到云端的内容</translation>
    </message>
    <message>
        <source>☁ Set up a cloud model to re-ask there…</source>
        <translation>☁ 设置云端模型以在云端重新提问…</translation>
    </message>
    <message>
        <source>↻ Re-ask with the cloud route</source>
        <translation>↻ 用云端模型重新提问</translation>
    </message>
    <message>
        <source>↻ Re-ask on this computer</source>
        <translation>↻ 在本机重新提问</translation>
    </message>
</context>
<context>
    <name>TurnsView</name>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
</context>
<context>
    <name>WatchedFoldersPage</name>
    <message>
        <source>Add folder…</source>
        <translation>添加文件夹…</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Documents added to, changed in or removed from these folders (and their subfolders) are indexed, re-indexed or removed from the library automatically, also when that happened while Docent was closed. Removing a folder here stops watching it; its documents stay in the library.</source>
        <translation>在这些文件夹（及其子文件夹）中添加、修改或删除的文档会自动被索引、重新索引或从文档库中移除，Docent 关闭期间发生的变化也一样。在此移除文件夹只会停止监视它，其中的文档仍留在文档库中。</translation>
    </message>
    <message>
        <source>Watch a folder</source>
        <translation>监视文件夹</translation>
    </message>
</context>
<context>
    <name>keys</name>
    <message>
        <source>add documents</source>
        <translation>添加文档</translation>
    </message>
    <message>
        <source>ask</source>
        <translation>提问</translation>
    </message>
    <message>
        <source>new line</source>
        <translation>换行</translation>
    </message>
    <message>
        <source>stop the answer</source>
        <translation>停止回答</translation>
    </message>
    <message>
        <source>new conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>search conversations</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <source>rename the conversation</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>previous answer to the question</source>
        <translation>该问题的上一个回答</translation>
    </message>
    <message>
        <source>next answer to the question</source>
        <translation>该问题的下一个回答</translation>
    </message>
    <message>
        <source>settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
</context>
<context>
    <name>routes</name>
    <message>
        <source>local</source>
        <translation>本地</translation>
    </message>
    <message>
        <source>cloud</source>
        <translation>云端</translation>
    </message>
    <message>
        <source>cached</source>
        <translation>缓存</translation>
    </message>
    <message>
        <source>fallback</source>
        <translation>回退</translation>
    </message>
</context>
</TS>
