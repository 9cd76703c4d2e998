/** A spinner on stderr for work longer than a moment; silent when stderr is not a TTY. */
export function startSpinner(label: string, stream: NodeJS.WriteStream = process.stderr): () => void {
  if (!stream.isTTY) return () => {};
  const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
  let frame = 0;
  let timer: NodeJS.Timeout | undefined;
  const delay = setTimeout(() => {
    timer = setInterval(() => {
      stream.write(`\r${frames[frame++ % frames.length]} ${label}`);
    }, 80);
  }, 300);
  return () => {
    clearTimeout(delay);
    if (timer) {
      clearInterval(timer);
      stream.write(`\r${" ".repeat(label.length + 2)}\r`);
    }
  };
}
